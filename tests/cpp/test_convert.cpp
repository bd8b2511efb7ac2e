// convert.hpp against independent references: the decoders below build each value with
// std::ldexp from sign, exponent and mantissa fields (the implementation moves bits and uses
// lookup tables), and the casts are checked against round-to-nearest-even done in double.
#include <algorithm>
#include <catch.hpp>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "convert.hpp"

using namespace st;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

uint32_t bitsOf(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

float floatOf(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

// Value of a finite field triple: (-1)^sign x (e == 0 ? m : 2^manBits + m) x 2^(...).
double fields(bool negative, int e, int m, int manBits, int bias) {
  const double magnitude = e == 0 ? std::ldexp(m, 1 - bias - manBits)
                                  : std::ldexp((1 << manBits) + m, e - bias - manBits);
  return negative ? -magnitude : magnitude;
}

double refF16(uint32_t h) {
  const bool s = (h >> 15) & 1;
  const int e = (h >> 10) & 31, m = h & 1023;
  if (e == 31) return m != 0 ? kNan : s ? -kInf : kInf;
  return fields(s, e, m, 10, 15);
}

double refBf16(uint32_t b) {
  const bool s = (b >> 15) & 1;
  const int e = (b >> 7) & 255, m = b & 127;
  if (e == 255) return m != 0 ? kNan : s ? -kInf : kInf;
  return fields(s, e, m, 7, 127);
}

double refE5M2(uint32_t b) {
  const bool s = b >> 7;
  const int e = (b >> 2) & 31, m = b & 3;
  if (e == 31) return m != 0 ? kNan : s ? -kInf : kInf;
  return fields(s, e, m, 2, 15);
}

double refE4M3(uint32_t b) {
  const int e = (b >> 3) & 15, m = b & 7;
  if (e == 15 && m == 7) return kNan;
  return fields(b >> 7, e, m, 3, 7);
}

double refE4M3Fnuz(uint32_t b) {
  return b == 0x80 ? kNan : fields(b >> 7, (b >> 3) & 15, b & 7, 3, 8);
}
double refE5M2Fnuz(uint32_t b) {
  return b == 0x80 ? kNan : fields(b >> 7, (b >> 2) & 31, b & 3, 2, 16);
}
double refE8M0(uint32_t b) { return b == 0xFF ? kNan : std::ldexp(1.0, static_cast<int>(b) - 127); }
double refE2M1(uint32_t c) { return fields(c >> 3, (c >> 1) & 3, c & 1, 1, 1); }

// Same value, NaN matching NaN, and the sign of zero checked.
bool same(double actual, double expected) {
  if (std::isnan(expected)) return std::isnan(actual);
  return actual == expected && std::signbit(actual) == std::signbit(expected);
}

// Round to nearest, ties to even, to a binary format with `manBits` stored mantissa bits,
// smallest normal exponent `minExp` and largest finite value `maxFinite`, in double.
double roundRne(double v, int manBits, int minExp, double maxFinite) {
  if (std::isnan(v) || std::isinf(v) || v == 0) return v;
  int e;
  std::frexp(std::fabs(v), &e);  // |v| in [2^(e-1), 2^e)
  const int lead = std::max(e - 1, minExp);
  const double ulp = std::ldexp(1.0, lead - manBits);
  const double q = std::fabs(v) / ulp;  // exact: a power-of-two scaling
  double r = std::floor(q);
  const double frac = q - r;
  if (frac > 0.5 || (frac == 0.5 && std::fmod(r, 2.0) == 1.0)) r += 1;
  const double rounded = r * ulp;
  return std::copysign(rounded > maxFinite ? kInf : rounded, v);
}

double roundToF16(double v) { return roundRne(v, 10, -14, 65504.0); }
double roundToBf16(double v) { return roundRne(v, 7, -126, std::ldexp(255.0, 120)); }
double roundToF32(double v) { return roundRne(v, 23, -126, FLT_MAX); }

// Nearest float to an integer, by integer arithmetic: keep 24 significant bits, ties to even.
double roundIntToF32(uint64_t magnitude, bool negative) {
  int length = 0;
  while (length < 64 && (magnitude >> length) != 0) ++length;
  double value = static_cast<double>(magnitude);  // exact below 2^24
  if (length > 24) {
    const int shift = length - 24;
    uint64_t q = magnitude >> shift;
    const uint64_t rest = magnitude & ((uint64_t{1} << shift) - 1);
    const uint64_t half = uint64_t{1} << (shift - 1);
    if (rest > half || (rest == half && (q & 1))) ++q;
    value = std::ldexp(static_cast<double>(q), shift);
  }
  return negative ? -value : value;
}

std::vector<float> decode(Dtype dtype, const std::vector<uint8_t>& bytes, uint64_t elements) {
  std::vector<float> out(static_cast<size_t>(float32Count(dtype, elements)));
  REQUIRE(toFloat32(dtype, bytes.data(), elements, out.data()));
  return out;
}

std::vector<uint8_t> allBytes() {
  std::vector<uint8_t> bytes(256);
  for (int i = 0; i < 256; ++i) bytes[i] = static_cast<uint8_t>(i);
  return bytes;
}

std::vector<uint8_t> all16BitPatterns() {
  std::vector<uint8_t> bytes(2 * 65536);
  for (uint32_t h = 0; h < 65536; ++h) {
    bytes[2 * h] = static_cast<uint8_t>(h);
    bytes[2 * h + 1] = static_cast<uint8_t>(h >> 8);
  }
  return bytes;
}

// Counts mismatches and keeps the first, so a million comparisons cost one assertion.
struct Mismatches {
  uint64_t count = 0;
  uint64_t firstInput = 0;
  double firstActual = 0, firstExpected = 0;
  void check(uint64_t input, double actual, double expected) {
    if (same(actual, expected)) return;
    if (count++ == 0) firstInput = input, firstActual = actual, firstExpected = expected;
  }
  void require() const {
    INFO("input 0x" << std::hex << firstInput << std::dec << ": got " << firstActual
                    << ", expected " << firstExpected);
    REQUIRE(count == 0);
  }
};

void checkEightBit(Dtype dtype, double (*reference)(uint32_t)) {
  const std::vector<float> out = decode(dtype, allBytes(), 256);
  Mismatches bad;
  for (uint32_t b = 0; b < 256; ++b) bad.check(b, out[b], reference(b));
  bad.require();
}

}  // namespace

TEST_CASE("hasFloat32Form and float32Count") {
  for (int i = 0; i < kDtypeCount; ++i) {
    const Dtype d = static_cast<Dtype>(i);
    const bool f6 = d == Dtype::F6_E2M3 || d == Dtype::F6_E3M2;
    INFO(dtypeName(d));
    CHECK(hasFloat32Form(d) == !f6);
    CHECK(float32Count(d, 6) == (f6 ? 0u : d == Dtype::C64 ? 12u : 6u));
  }
}

TEST_CASE("F6 has no float32 form: toFloat32 refuses and writes nothing") {
  const std::vector<uint8_t> bytes(3, 0x55);
  float out[4] = {7, 7, 7, 7};
  CHECK_FALSE(toFloat32(Dtype::F6_E2M3, bytes.data(), 4, out));
  CHECK_FALSE(toFloat32(Dtype::F6_E3M2, bytes.data(), 4, out));
  CHECK(out[0] == 7);
}

TEST_CASE("zero elements succeed without touching the (possibly null) buffers") {
  for (int i = 0; i < kDtypeCount; ++i) {
    const Dtype d = static_cast<Dtype>(i);
    CHECK(toFloat32(d, nullptr, 0, nullptr) == hasFloat32Form(d));
  }
}

TEST_CASE("an element count no buffer can hold is refused") {
  uint8_t byte = 0;
  float out = 7;
  CHECK_FALSE(toFloat32(Dtype::U8, &byte, UINT64_MAX, &out));
  CHECK_FALSE(toFloat32(Dtype::F64, &byte, uint64_t{1} << 62, &out));
  CHECK(out == 7);
}

TEST_CASE("8-bit float formats, all 256 codes") {
  SECTION("F8_E4M3") { checkEightBit(Dtype::F8_E4M3, refE4M3); }
  SECTION("F8_E5M2") { checkEightBit(Dtype::F8_E5M2, refE5M2); }
  SECTION("F8_E4M3FNUZ") { checkEightBit(Dtype::F8_E4M3FNUZ, refE4M3Fnuz); }
  SECTION("F8_E5M2FNUZ") { checkEightBit(Dtype::F8_E5M2FNUZ, refE5M2Fnuz); }
  SECTION("F8_E8M0") { checkEightBit(Dtype::F8_E8M0, refE8M0); }
}

TEST_CASE("8-bit float formats, landmark values from their specifications") {
  const auto one = [](Dtype d, uint8_t code) { return decode(d, {code}, 1)[0]; };
  CHECK(one(Dtype::F8_E4M3, 0x7E) == 448);
  CHECK(one(Dtype::F8_E4M3, 0x08) == std::ldexp(1.0f, -6));
  CHECK(one(Dtype::F8_E4M3, 0x01) == std::ldexp(1.0f, -9));
  CHECK(std::isnan(one(Dtype::F8_E4M3, 0x7F)));
  CHECK(std::signbit(one(Dtype::F8_E4M3, 0xFF)));  // the fn NaN keeps its sign
  CHECK(std::signbit(one(Dtype::F8_E4M3, 0x80)));  // -0
  CHECK(one(Dtype::F8_E5M2, 0x7B) == 57344);
  CHECK(one(Dtype::F8_E5M2, 0x7C) == INFINITY);
  CHECK(one(Dtype::F8_E5M2, 0xFC) == -INFINITY);
  CHECK(one(Dtype::F8_E5M2, 0x01) == std::ldexp(1.0f, -16));
  CHECK(one(Dtype::F8_E4M3FNUZ, 0x7F) == 240);
  CHECK(one(Dtype::F8_E4M3FNUZ, 0x01) == std::ldexp(1.0f, -10));
  CHECK(std::isnan(one(Dtype::F8_E4M3FNUZ, 0x80)));
  CHECK(one(Dtype::F8_E5M2FNUZ, 0x7F) == 57344);
  CHECK(one(Dtype::F8_E5M2FNUZ, 0x7C) == 32768);  // no infinity in FNUZ
  CHECK(one(Dtype::F8_E5M2FNUZ, 0x01) == std::ldexp(1.0f, -17));
  CHECK(std::isnan(one(Dtype::F8_E5M2FNUZ, 0x80)));
  CHECK(one(Dtype::F8_E8M0, 0x7F) == 1);
  CHECK(one(Dtype::F8_E8M0, 0x00) == std::ldexp(1.0f, -127));  // a float32 subnormal
  CHECK(one(Dtype::F8_E8M0, 0xFE) == std::ldexp(1.0f, 127));
  CHECK(std::isnan(one(Dtype::F8_E8M0, 0xFF)));
}

TEST_CASE("F4 (E2M1), all 16 codes, low nibble first") {
  std::vector<uint8_t> bytes(8);
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<uint8_t>((2 * i) | (2 * i + 1) << 4);
  const std::vector<float> out = decode(Dtype::F4, bytes, 16);
  Mismatches bad;
  for (uint32_t c = 0; c < 16; ++c) bad.check(c, out[c], refE2M1(c));
  bad.require();
  const float positive[8] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6};
  for (int c = 0; c < 8; ++c) {
    CHECK(out[c] == positive[c]);
    CHECK(out[c + 8] == -positive[c]);
  }
  CHECK(std::signbit(out[8]));  // -0
}

TEST_CASE("F4, all 256 bytes and odd tails, through the vector loop too") {
  // Long enough for the wasm SIMD loop (16 bytes at a time), with counts that end inside it,
  // between it and the scalar tail, and on an odd element.
  std::vector<uint8_t> bytes(256 + 21);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 7 + 3);
  const uint64_t all = 2 * static_cast<uint64_t>(bytes.size());
  for (uint64_t elements : {all, all - 1, uint64_t{64}, uint64_t{33}}) {
    const std::vector<float> out = decode(Dtype::F4, bytes, elements);
    Mismatches bad;
    for (uint64_t e = 0; e < elements; ++e) {
      const uint8_t b = bytes[e / 2];
      bad.check(static_cast<uint32_t>(e), out[e], refE2M1(e % 2 ? b >> 4 : b & 15));
    }
    bad.require();
  }
}

TEST_CASE("F4 with an odd count reads only the low nibble of the last byte") {
  const std::vector<uint8_t> bytes = {0x71, 0x0F};  // exact size, so ASan sees any overread
  const std::vector<float> out = decode(Dtype::F4, bytes, 3);
  CHECK(out == std::vector<float>{0.5f, 6, -6});
}

TEST_CASE("F16 and BF16, all 65536 patterns") {
  const std::vector<uint8_t> bytes = all16BitPatterns();
  SECTION("F16") {
    const std::vector<float> out = decode(Dtype::F16, bytes, 65536);
    Mismatches bad;
    for (uint32_t h = 0; h < 65536; ++h) bad.check(h, out[h], refF16(h));
    bad.require();
  }
  SECTION("BF16") {
    const std::vector<float> out = decode(Dtype::BF16, bytes, 65536);
    Mismatches bad;
    for (uint32_t b = 0; b < 65536; ++b) bad.check(b, out[b], refBf16(b));
    bad.require();
  }
  SECTION("NaN payloads and signs are kept") {
    const std::vector<float> f16 = decode(Dtype::F16, bytes, 65536);
    const std::vector<float> bf16 = decode(Dtype::BF16, bytes, 65536);
    uint64_t bad = 0;
    for (uint32_t h = 0; h < 65536; ++h) {
      if ((h & 0x7C00) == 0x7C00 && (h & 0x3FF) != 0) {
        const uint32_t x = bitsOf(f16[h]);
        bad += (x >> 31) != (h >> 15) || ((x >> 13) & 0x3FF) != (h & 0x3FF);
      }
      if ((h & 0x7F80) == 0x7F80 && (h & 0x7F) != 0) bad += bitsOf(bf16[h]) != h << 16;
    }
    CHECK(bad == 0);
  }
}

TEST_CASE("f16ToFloat32 and bf16ToFloat32 match toFloat32") {
  std::vector<uint16_t> all(65536);
  for (uint32_t h = 0; h < 65536; ++h) all[h] = static_cast<uint16_t>(h);
  const std::vector<uint8_t> bytes = all16BitPatterns();
  std::vector<float> viaHalf(65536), viaBf(65536);
  f16ToFloat32(all.data(), all.size(), viaHalf.data());
  bf16ToFloat32(all.data(), all.size(), viaBf.data());
  CHECK(std::memcmp(viaHalf.data(), decode(Dtype::F16, bytes, 65536).data(), 4 * 65536) == 0);
  CHECK(std::memcmp(viaBf.data(), decode(Dtype::BF16, bytes, 65536).data(), 4 * 65536) == 0);
}

TEST_CASE("BOOL, U8, I8 over all 256 bytes; I16, U16 over all 65536 patterns") {
  const std::vector<float> boolean = decode(Dtype::BOOL, allBytes(), 256);
  const std::vector<float> u8 = decode(Dtype::U8, allBytes(), 256);
  const std::vector<float> i8 = decode(Dtype::I8, allBytes(), 256);
  Mismatches bad;
  for (uint32_t b = 0; b < 256; ++b) {
    bad.check(b, boolean[b], b != 0 ? 1.0 : 0.0);
    bad.check(b, u8[b], b);
    bad.check(b, i8[b], b < 128 ? static_cast<int>(b) : static_cast<int>(b) - 256);
  }
  const std::vector<float> i16 = decode(Dtype::I16, all16BitPatterns(), 65536);
  const std::vector<float> u16 = decode(Dtype::U16, all16BitPatterns(), 65536);
  for (uint32_t h = 0; h < 65536; ++h) {
    bad.check(h, u16[h], h);
    bad.check(h, i16[h], h < 32768 ? static_cast<int>(h) : static_cast<int>(h) - 65536);
  }
  bad.require();
}

TEST_CASE("32- and 64-bit integers round to the nearest float, ties to even") {
  std::vector<uint64_t> samples = {0,
                                   1,
                                   (1u << 24) - 1,
                                   (1u << 24) + 1,  // tie: down to even
                                   (1u << 24) + 3,  // tie: up to even
                                   (1u << 25) + 2,
                                   (1u << 25) + 6,
                                   0x7FFFFFFFu,
                                   0x80000000u,
                                   0xFFFFFFFFu,
                                   (uint64_t{1} << 53) + 1,
                                   0x7FFFFFFFFFFFFFFFu,
                                   0x8000000000000000u,
                                   0xFFFFFF7FFFFFFFFFu,  // just below the tie under 2^64
                                   0xFFFFFF8000000000u,  // tie: rounds up to 2^64
                                   0xFFFFFFFFFFFFFFFFu};
  std::mt19937_64 random(1);
  for (int i = 0; i < 100000; ++i) samples.push_back(random() >> (random() % 64));
  for (int i = 0; i < 1000; ++i) samples.push_back(0 - samples[i]);
  const size_t n = samples.size();
  std::vector<uint8_t> bytes64(8 * n), bytes32(4 * n);
  for (size_t i = 0; i < n; ++i) {
    std::memcpy(&bytes64[8 * i], &samples[i], 8);
    const uint32_t low = static_cast<uint32_t>(samples[i]);
    std::memcpy(&bytes32[4 * i], &low, 4);
  }
  const std::vector<float> u64 = decode(Dtype::U64, bytes64, n);
  const std::vector<float> i64 = decode(Dtype::I64, bytes64, n);
  const std::vector<float> u32 = decode(Dtype::U32, bytes32, n);
  const std::vector<float> i32 = decode(Dtype::I32, bytes32, n);
  Mismatches bad;
  for (size_t i = 0; i < n; ++i) {
    const uint64_t v = samples[i];
    const uint32_t low = static_cast<uint32_t>(v);
    const bool negative64 = v >> 63, negative32 = low >> 31;
    bad.check(v, u64[i], roundIntToF32(v, false));
    bad.check(v, i64[i], roundIntToF32(negative64 ? 0 - v : v, negative64));
    bad.check(low, u32[i], roundIntToF32(low, false));
    bad.check(low, i32[i], roundIntToF32(negative32 ? 0u - low : low, negative32));
  }
  bad.require();
}

TEST_CASE("F64 rounds to the nearest float, ties to even, overflowing to infinity") {
  const double maxTie = (static_cast<double>(FLT_MAX) + std::ldexp(1.0, 128)) / 2;
  std::vector<double> samples = {0.0,
                                 -0.0,
                                 1.0,
                                 -1.5,
                                 kInf,
                                 -kInf,
                                 kNan,
                                 -kNan,
                                 DBL_MAX,
                                 -DBL_MAX,
                                 DBL_MIN,
                                 4.9e-324,
                                 -4.9e-324,
                                 FLT_MAX,
                                 maxTie,
                                 -maxTie,
                                 std::nextafter(maxTie, 0.0),
                                 std::ldexp(1.0, -149),
                                 std::ldexp(1.0, -150),
                                 std::ldexp(3.0, -150),
                                 std::nextafter(std::ldexp(1.0, -150), 1.0),
                                 1.0 + std::ldexp(1.0, -24),
                                 1.0 + std::ldexp(3.0, -24),
                                 std::nextafter(1.0 + std::ldexp(1.0, -24), 2.0)};
  std::mt19937_64 random(2);
  for (int i = 0; i < 100000; ++i) {
    uint64_t bits = random();
    double d;
    std::memcpy(&d, &bits, 8);
    samples.push_back(d);
    samples.push_back(std::ldexp(d, -(static_cast<int>(random() % 1100))));  // to float range
  }
  std::vector<uint8_t> bytes(8 * samples.size());
  std::memcpy(bytes.data(), samples.data(), bytes.size());
  const std::vector<float> out = decode(Dtype::F64, bytes, samples.size());
  Mismatches bad;
  for (size_t i = 0; i < samples.size(); ++i) {
    uint64_t bits;
    std::memcpy(&bits, &samples[i], 8);
    bad.check(bits, out[i], roundToF32(samples[i]));
  }
  bad.require();
}

TEST_CASE("F32 and C64 are copied bit for bit, from any alignment") {
  const uint32_t patterns[5] = {0x7F800001u, 0xFFC00000u, 0x80000000u, 0x00000001u, 0x3F800000u};
  std::vector<uint8_t> bytes(1 + sizeof patterns);
  std::memcpy(bytes.data() + 1, patterns, sizeof patterns);
  float f32[5], c64[4];
  REQUIRE(toFloat32(Dtype::F32, bytes.data() + 1, 5, f32));
  REQUIRE(toFloat32(Dtype::C64, bytes.data() + 1, 2, c64));
  CHECK(std::memcmp(f32, patterns, sizeof f32) == 0);
  CHECK(std::memcmp(c64, patterns, sizeof c64) == 0);
}

TEST_CASE("unaligned multi-byte sources decode like aligned ones") {
  // F16 1.0 and -2^-24 from offset 1; the I64 -2^56 from offset 7 ends at the last byte.
  const std::vector<uint8_t> bytes = {0xAA, 0x00, 0x3C, 0x01, 0x80, 0x00, 0x00, 0x00,
                                      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xFF};
  float out[2];
  REQUIRE(toFloat32(Dtype::F16, bytes.data() + 1, 2, out));
  CHECK(out[0] == 1.0f);
  CHECK(out[1] == -std::ldexp(1.0f, -24));
  REQUIRE(toFloat32(Dtype::I64, bytes.data() + 7, 1, out));
  CHECK(out[0] == -std::ldexp(1.0f, 56));
}

TEST_CASE("float32 -> F16 / BF16 -> float32 round-trips all 65536 patterns") {
  std::vector<uint16_t> all(65536), back(65536);
  for (uint32_t h = 0; h < 65536; ++h) all[h] = static_cast<uint16_t>(h);
  std::vector<float> wide(65536);
  uint64_t bad16 = 0, badBf16 = 0;

  f16ToFloat32(all.data(), all.size(), wide.data());
  float32ToF16(wide.data(), wide.size(), back.data());
  for (uint32_t h = 0; h < 65536; ++h) {
    const bool nan = (h & 0x7C00) == 0x7C00 && (h & 0x3FF) != 0;
    bad16 += back[h] != (nan ? (h | 0x200) : h);  // a NaN comes back quiet
  }
  bf16ToFloat32(all.data(), all.size(), wide.data());
  float32ToBf16(wide.data(), wide.size(), back.data());
  for (uint32_t h = 0; h < 65536; ++h) {
    const bool nan = (h & 0x7F80) == 0x7F80 && (h & 0x7F) != 0;
    badBf16 += back[h] != (nan ? (h | 0x40) : h);
  }
  CHECK(bad16 == 0);
  CHECK(badBf16 == 0);
}

namespace {

// Casts `inputs` both ways and compares with roundRne; NaNs must come out as quiet NaNs with
// the input's sign.
void checkCasts(const std::vector<uint32_t>& inputs) {
  std::vector<float> src(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) src[i] = floatOf(inputs[i]);
  std::vector<uint16_t> f16(src.size()), bf16(src.size());
  float32ToF16(src.data(), src.size(), f16.data());
  float32ToBf16(src.data(), src.size(), bf16.data());
  Mismatches badF16, badBf16;
  uint64_t badNan = 0;
  for (size_t i = 0; i < src.size(); ++i) {
    if (std::isnan(src[i])) {
      const uint32_t sign = inputs[i] >> 31;
      badNan += !std::isnan(refF16(f16[i])) || !(f16[i] & 0x200) || (f16[i] >> 15) != sign;
      badNan += !std::isnan(refBf16(bf16[i])) || !(bf16[i] & 0x40) || (bf16[i] >> 15) != sign;
      continue;
    }
    badF16.check(inputs[i], refF16(f16[i]), roundToF16(src[i]));
    badBf16.check(inputs[i], refBf16(bf16[i]), roundToBf16(src[i]));
  }
  INFO("F16");
  badF16.require();
  INFO("BF16");
  badBf16.require();
  CHECK(badNan == 0);
}

// Every midpoint between neighbouring values of a 16-bit format (all its ties, the overflow
// threshold past the largest finite value, the subnormal steps), and one float ulp either side.
std::vector<uint32_t> tiesOf(double (*reference)(uint32_t), double beyondMax) {
  std::vector<uint32_t> out;
  for (uint32_t h = 0; h < 0x8000; ++h) {
    const double v = reference(h);
    if (!std::isfinite(v)) continue;
    const double next = std::isfinite(reference(h + 1)) ? reference(h + 1) : beyondMax;
    const float mid = static_cast<float>((v + next) / 2);  // exact: needs 2 more bits
    for (float f : {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, INFINITY)}) {
      out.push_back(bitsOf(f));
      out.push_back(bitsOf(-f));
    }
  }
  return out;
}

}  // namespace

TEST_CASE("float32 -> F16 / BF16 at every tie and next to it") {
  checkCasts(tiesOf(refF16, 65536.0));
  checkCasts(tiesOf(refBf16, std::ldexp(1.0, 128)));
}

TEST_CASE("float32 -> F16 / BF16 special inputs") {
  checkCasts({0x00000000u,
              0x80000000u,
              0x7F800000u,
              0xFF800000u,
              0x7F7FFFFFu,
              0xFF7FFFFFu,
              0x00000001u,
              0x807FFFFFu,
              0x7F800001u,
              0xFF800001u,
              0x7FC00000u,
              0xFFFFFFFFu,
              0x7FBFFFFFu,
              bitsOf(65504.0f),
              bitsOf(65519.99f),
              bitsOf(65520.0f),
              bitsOf(std::ldexp(1.0f, -24)),
              bitsOf(std::ldexp(1.0f, -25)),
              bitsOf(std::ldexp(1.0f, -26)),
              bitsOf(std::ldexp(1.0f, -14))});
  uint16_t h;
  const float signalling = floatOf(0x7F800001u);  // payload only in the low bits
  float32ToF16(&signalling, 1, &h);
  CHECK(h == 0x7E00);
  float32ToBf16(&signalling, 1, &h);
  CHECK(h == 0x7FC0);
}

TEST_CASE("float32 -> F16 / BF16 on every 4099th float32 pattern") {
  std::vector<uint32_t> inputs;
  for (uint64_t x = 0; x <= 0xFFFFFFFFu; x += 4099) inputs.push_back(static_cast<uint32_t>(x));
  checkCasts(inputs);
}

// All 2^32 inputs: minutes even natively, so kept out of the default run ([.]); the native
// release suite runs it (ctest core_tests_slow).
TEST_CASE("float32 -> F16 / BF16 on all float32 patterns", "[.][exhaustive]") {
  std::vector<uint32_t> inputs(uint64_t{1} << 24);
  for (uint64_t base = 0; base <= 0xFFFFFFFFu; base += inputs.size()) {
    for (size_t i = 0; i < inputs.size(); ++i) inputs[i] = static_cast<uint32_t>(base + i);
    checkCasts(inputs);
  }
}
