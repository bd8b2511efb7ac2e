#include "small_strtod.hpp"

#include <cfloat>
#include <cmath>
#include <cstdint>

namespace st {
namespace {

// 2^1024 - 2^970, the midpoint between DBL_MAX and 2^1024: a value at or above it rounds to
// infinity (at it, ties-to-even picks 2^1024). 309 digits, as 0.DIGITS x 10^309.
constexpr char kOverflowDigits[] =
    "179769313486231580793728971405303415079934132710037826936173778980444968292764750946649017"
    "977587207096330286416692887910946555547851940402630657488671505820681908902000708383676273"
    "854845817711531764475730270069855571366959622842914819860834936475292719074168444365510704"
    "342711559699508093042880177904174497792";
constexpr int64_t kOverflowExponent = sizeof kOverflowDigits - 1;

constexpr double kPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                             1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
constexpr int64_t kMaxExactPow10 = 22;

bool isDigit(char c) { return c >= '0' && c <= '9'; }

// Whether 0.digits (count of them, the first non-zero) x 10^309 >= the overflow midpoint.
bool overflowsAt309(const char* const* digits, const int64_t* counts, int parts) {
  int64_t at = 0;  // position in kOverflowDigits
  for (int p = 0; p < parts; ++p) {
    for (int64_t i = 0; i < counts[p]; ++i, ++at) {
      if (at == kOverflowExponent) return true;  // equal so far, and more digits: at least equal
      const char d = digits[p][i];
      if (d != kOverflowDigits[at]) return d > kOverflowDigits[at];
    }
  }
  return at == kOverflowExponent;  // shorter and equal so far: below (the midpoint ends in 2)
}

}  // namespace

double parseDouble(const char* s, char** end) {
  const char* p = s;
  const bool negative = *p == '-';
  if (*p == '-' || *p == '+') ++p;
  const char* integer = p;
  while (isDigit(*p)) ++p;
  int64_t integerCount = p - integer;
  const char* fraction = p;
  int64_t fractionCount = 0;
  if (*p == '.' && isDigit(p[1])) {
    fraction = ++p;
    while (isDigit(*p)) ++p;
    fractionCount = p - fraction;
  } else if (*p == '.' && integerCount > 0) {
    ++p;
  }
  if (integerCount == 0 && fractionCount == 0) {
    *end = const_cast<char*>(s);
    return 0;
  }
  int64_t exponent = 0;
  if (*p == 'e' || *p == 'E') {
    const char* e = p + 1;
    const bool negativeExponent = *e == '-';
    if (*e == '-' || *e == '+') ++e;
    if (isDigit(*e)) {
      for (; isDigit(*e); ++e)
        if (exponent < 1000000000) exponent = exponent * 10 + (*e - '0');  // far past any double
      if (negativeExponent) exponent = -exponent;
      p = e;
    }
  }
  *end = const_cast<char*>(p);

  // value = 0.DIGITS x 10^decimalExponent, DIGITS the integer's then the fraction's digits from
  // the first non-zero one: every leading zero dropped lowers the exponent by one.
  int64_t decimalExponent = integerCount + exponent;
  for (; integerCount > 0 && *integer == '0'; --decimalExponent) ++integer, --integerCount;
  if (integerCount == 0)
    for (; fractionCount > 0 && *fraction == '0'; --decimalExponent) ++fraction, --fractionCount;
  const char* parts[2] = {integer, fraction};
  const int64_t counts[2] = {integerCount, fractionCount};
  if (counts[0] + counts[1] == 0) return negative ? -0.0 : 0.0;
  if (decimalExponent > kOverflowExponent ||
      (decimalExponent == kOverflowExponent && overflowsAt309(parts, counts, 2)))
    return negative ? -HUGE_VAL : HUGE_VAL;

  // Below the midpoint: the first 19 significant digits, scaled by exact powers of ten.
  uint64_t mantissa = 0;
  int taken = 0;
  for (int part = 0; part < 2 && taken < 19; ++part)
    for (int64_t i = 0; i < counts[part] && taken < 19; ++i, ++taken)
      mantissa = mantissa * 10 + uint64_t(parts[part][i] - '0');
  int64_t scale = decimalExponent - taken;
  double value = static_cast<double>(mantissa);
  while (scale > 0) {  // at most 309 - 19: the value stays below the midpoint
    const int64_t step = scale < kMaxExactPow10 ? scale : kMaxExactPow10;
    value *= kPow10[step];
    scale -= step;
  }
  while (scale < 0 && value != 0) {  // ends within 17 steps, at zero if not before
    const int64_t step = -scale < kMaxExactPow10 ? -scale : kMaxExactPow10;
    value /= kPow10[step];
    scale += step;
  }
  if (value > DBL_MAX) value = DBL_MAX;  // rounding on the way up, just under the midpoint
  return negative ? -value : value;
}

}  // namespace st
