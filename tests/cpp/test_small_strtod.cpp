// small_strtod.hpp (the wasm module's strtod) against the C library's: the same end of the
// number, the same verdict on overflow (exact, down to the last of 309 digits), and a value
// within a few units in the last place.
#include <catch.hpp>

#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include "small_strtod.hpp"

namespace {

// 2^1024 - 2^970: from here up, a decimal rounds to infinity.
const std::string kMidpoint =
    "179769313486231580793728971405303415079934132710037826936173778980444968292764750946649017"
    "977587207096330286416692887910946555547851940402630657488671505820681908902000708383676273"
    "854845817711531764475730270069855571366959622842914819860834936475292719074168444365510704"
    "342711559699508093042880177904174497792";

void checkAgainstLibc(const std::string& text) {
  INFO(text);
  char* ourEnd = nullptr;
  char* libcEnd = nullptr;
  const double ours = st::parseDouble(text.c_str(), &ourEnd);
  const double libc = std::strtod(text.c_str(), &libcEnd);
  REQUIRE(ourEnd - text.c_str() == libcEnd - text.c_str());
  REQUIRE(std::isfinite(ours) == std::isfinite(libc));
  REQUIRE(std::signbit(ours) == std::signbit(libc));
  if (!std::isfinite(libc)) {
    REQUIRE(ours == libc);
  } else {
    // A few rounding steps of 2^-53 each; below DBL_MIN, a couple of the subnormals' spacing.
    REQUIRE(std::fabs(ours - libc) <= std::fabs(libc) * 1e-15 + 2 * 4.9406564584124654e-324);
  }
}

}  // namespace

TEST_CASE("parseDouble reads what strtod reads, and stops where it stops", "[strtod]") {
  for (const char* text : {"0",
                           "-0",
                           "+0",
                           "0.0",
                           "1",
                           "-1",
                           "1.5",
                           "0.1",
                           "123456789012345678901234567890",
                           "1e0",
                           "1E+2",
                           "2.5e-3",
                           "-7.25E-10",
                           "1e22",
                           "1e23",
                           "9007199254740993",
                           "0.000001",
                           "1.e5",
                           ".5",
                           "5.",
                           "-.5",
                           "1e",
                           "1e+",
                           "1e-x",
                           "12abc",
                           "1.2.3",
                           "e5",
                           "",
                           "-",
                           ".",
                           "+.",
                           "00012",
                           "0.0000000000000000000001234",
                           "4.9e-324",
                           "2.4e-324",
                           "2.5e-324",
                           "1e-400",
                           "-1e-400",
                           "2.2250738585072014e-308",
                           "1.7976931348623157e308",
                           "1.7976931348623158e308",
                           "1.7976931348623159e308",
                           "1e308",
                           "1e309",
                           "-1e309",
                           "1e999999999999999999999",
                           "1e-999999999999999999999",
                           "0e999999999",
                           "0.1797693134862315807937289714053034150799e309"})
    checkAgainstLibc(text);
}

TEST_CASE("parseDouble overflows exactly at the midpoint above DBL_MAX", "[strtod]") {
  checkAgainstLibc(kMidpoint);                    // the midpoint itself: ties to 2^1024
  checkAgainstLibc(kMidpoint + "0000");           // the same value, longer
  checkAgainstLibc(kMidpoint + ".000000000001");  // just above
  checkAgainstLibc("-" + kMidpoint);
  checkAgainstLibc("0." + kMidpoint + "e309");  // the same value through the exponent
  checkAgainstLibc("000" + kMidpoint.substr(0, 100) + "." + kMidpoint.substr(100));
  for (size_t at = 0; at < kMidpoint.size(); ++at) {
    // One digit lower or higher anywhere: below or above the midpoint.
    for (int delta : {-1, 1}) {
      std::string text = kMidpoint;
      const int digit = text[at] - '0' + delta;
      if (digit < 0 || digit > 9) continue;
      text[at] = char('0' + digit);
      checkAgainstLibc(text);
    }
    checkAgainstLibc(kMidpoint.substr(0, at + 1) +
                     std::string(kMidpoint.size() - at - 1, '0'));  // cut short
  }
}

TEST_CASE("parseDouble agrees with strtod on random decimals", "[strtod]") {
  std::mt19937_64 random(20261130);
  auto digits = [&](size_t n) {
    std::string s;
    for (size_t i = 0; i < n; ++i) s += char('0' + random() % 10);
    return s;
  };
  for (int i = 0; i < 200000; ++i) {
    std::string text = random() % 2 ? "-" : "";
    text += digits(1 + random() % 30);
    if (random() % 2) text += "." + digits(1 + random() % 30);
    if (random() % 4) text += "e" + std::to_string(int(random() % 800) - 400);
    checkAgainstLibc(text);
  }
  // DBL_MAX and the doubles just under it, printed at several precisions (rounded up at some).
  double x = DBL_MAX;
  for (int k = 0; k < 4; ++k, x = std::nextafter(x, 0.0)) {
    for (int precision : {15, 16, 17, 18, 20, 25, 40}) {
      char text[64];
      std::snprintf(text, sizeof text, "%.*e", precision, x);
      checkAgainstLibc(text);
    }
  }
}
