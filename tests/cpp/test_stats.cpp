// stats.hpp on small hand-checked arrays, and on large random arrays against a naive
// reference: long double two-pass moments over the whole array, and the documented bin formula
// evaluated value by value.
#include <algorithm>
#include <catch.hpp>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "convert.hpp"
#include "stats.hpp"

using namespace st;
using Catch::Matchers::WithinRel;

namespace {

constexpr float kNanF = std::numeric_limits<float>::quiet_NaN();
constexpr float kInfF = std::numeric_limits<float>::infinity();

template <class T>
std::vector<uint8_t> bytesOf(const std::vector<T>& values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(T));
  if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

Stats statsOf(Dtype dtype, const std::vector<uint8_t>& bytes, uint64_t elements, uint32_t bins) {
  Stats s;
  REQUIRE(computeStats(dtype, bytes.data(), elements, bins, s));
  return s;
}

Stats statsOf(const std::vector<float>& values, uint32_t bins) {
  return statsOf(Dtype::F32, bytesOf(values), values.size(), bins);
}

Stats naive(const std::vector<double>& values, uint32_t bins) {
  Stats r;
  r.count = values.size();
  std::vector<double> finite;
  for (double v : values) {
    if (std::isnan(v)) ++r.nanCount;
    if (std::isinf(v)) ++r.infCount;
    if (v == 0) ++r.zeroCount;
    if (std::isfinite(v)) finite.push_back(v);
  }
  r.finiteCount = finite.size();
  r.histogram.assign(bins, 0);
  if (finite.empty()) return r;
  r.min = *std::min_element(finite.begin(), finite.end());
  r.max = *std::max_element(finite.begin(), finite.end());
  long double sum = 0, squares = 0;
  for (double v : finite) sum += v;
  const long double mean = sum / finite.size();
  for (double v : finite) squares += (v - mean) * (v - mean);
  r.mean = static_cast<double>(mean);
  r.std = static_cast<double>(std::sqrt(squares / finite.size()));
  if (bins == 0) return r;
  const double spread = r.max - r.min;
  const double scale = !(spread <= 0x1p600) ? 0x1p-600 : spread < 0x1p-600 ? 0x1p600 : 1.0;
  const double lo = r.min * scale, perBin = bins / (r.max * scale - lo);
  for (double v : finite) {
    const double position = r.min == r.max ? bins : std::floor((v * scale - lo) * perBin);
    ++r.histogram[std::min<uint64_t>(bins - 1, static_cast<uint64_t>(position))];
  }
  return r;
}

void checkMatches(const Stats& s, const Stats& r) {
  CHECK(s.count == r.count);
  CHECK(s.finiteCount == r.finiteCount);
  CHECK(s.nanCount == r.nanCount);
  CHECK(s.infCount == r.infCount);
  CHECK(s.zeroCount == r.zeroCount);
  CHECK(s.min == r.min);
  CHECK(s.max == r.max);
  CHECK(s.histogramMin == r.min);
  CHECK(s.histogramMax == r.max);
  CHECK_THAT(s.mean, WithinRel(r.mean, 1e-12) || Catch::Matchers::WithinAbs(r.mean, 1e-12 * r.std));
  CHECK_THAT(s.std, WithinRel(r.std, 1e-9));
  CHECK(s.histogram == r.histogram);
}

}  // namespace

TEST_CASE("a small F32 array with NaN, infinities and signed zeros") {
  const Stats s = statsOf({1, -2, kNanF, kInfF, -kInfF, 0.0f, -0.0f, 3.5f}, 4);
  CHECK(s.count == 8);
  CHECK(s.finiteCount == 5);
  CHECK(s.nanCount == 1);
  CHECK(s.infCount == 2);
  CHECK(s.zeroCount == 2);
  CHECK(s.min == -2);
  CHECK(s.max == 3.5);
  CHECK(s.mean == 0.5);
  CHECK_THAT(s.std, WithinRel(std::sqrt(16.0 / 5), 1e-15));  // squared deviations sum to 16
  CHECK(s.histogramMin == -2);
  CHECK(s.histogramMax == 3.5);
  // edges -2, -0.625, 0.75, 2.125, 3.5
  CHECK(s.histogram == std::vector<uint64_t>{1, 2, 1, 1});
}

TEST_CASE("values on bin edges go to the bin above; max goes to the last bin") {
  CHECK(statsOf({0, 1, 2, 3, 4}, 4).histogram == std::vector<uint64_t>{1, 1, 1, 2});
  CHECK(statsOf({0, 1, 2, 3, 4}, 2).histogram == std::vector<uint64_t>{2, 3});
  CHECK(statsOf({4, 3, 2, 1, 0}, 1).histogram == std::vector<uint64_t>{5});
  CHECK(statsOf({-1, 0, 0.5f, 1}, 4).histogram == std::vector<uint64_t>{1, 0, 1, 2});
}

TEST_CASE("edges that are not exact in binary follow the documented formula") {
  std::vector<float> values;
  for (int i = 0; i <= 1000; ++i) values.push_back(static_cast<float>(i) / 1000);
  for (uint32_t bins : {3u, 7u, 10u, 100u, 999u}) {
    INFO(bins << " bins");
    checkMatches(statsOf(values, bins), naive({values.begin(), values.end()}, bins));
  }
}

TEST_CASE("a value on an edge in exact arithmetic goes to the bin above") {
  // 410.75 = -100 + 21 x 681 / 28, while the double -100 + 21 x (681 / 28) rounds above it: the
  // formula, unlike a comparison with computed edges, puts it in bin 21.
  const Stats s = statsOf({-100, 581, 410.75f}, 28);
  CHECK(-100 + 21 * (681.0 / 28) > 410.75);
  CHECK(s.histogram[20] == 0);
  CHECK(s.histogram[21] == 1);
}

TEST_CASE("F64 with a subnormal range still bins") {
  const double tiny = std::numeric_limits<double>::denorm_min();
  CHECK(statsOf(Dtype::F64, bytesOf(std::vector<double>{0, tiny, 2 * tiny, 3 * tiny}), 4, 3)
            .histogram == std::vector<uint64_t>{1, 1, 2});
  // 1e-300 and its next four neighbours: bins narrower than the spacing of the values.
  std::vector<double> values = {1e-300};
  for (int i = 0; i < 4; ++i) values.push_back(std::nextafter(values.back(), 1.0));
  for (uint32_t bins : {2u, 3u, 4u, 7u}) {
    INFO(bins << " bins");
    CHECK(statsOf(Dtype::F64, bytesOf(values), values.size(), bins).histogram ==
          naive(values, bins).histogram);
  }
}

TEST_CASE("values on and next to bin boundaries, many bins and ranges") {
  std::mt19937_64 random(4);
  std::uniform_real_distribution<double> uniform(-1e6, 1e6);
  for (int round = 0; round < 20; ++round) {
    const double a = uniform(random), b = a + std::fabs(uniform(random)) * 1e-3 * (round + 1);
    const uint32_t bins = 1 + static_cast<uint32_t>(random() % 5000);
    const double width = (b - a) / bins;
    std::vector<double> values = {a, b};
    for (uint32_t k = 1; k < bins; ++k) {
      const double edge = a + k * width;
      values.insert(values.end(),
                    {edge, std::nextafter(edge, -HUGE_VAL), std::nextafter(edge, HUGE_VAL)});
    }
    INFO("range [" << a << ", " << b << "], " << bins << " bins");
    checkMatches(statsOf(Dtype::F64, bytesOf(values), values.size(), bins), naive(values, bins));
  }
}

TEST_CASE("all values equal: every one in the last bin, std 0") {
  const Stats s = statsOf({5, 5, kNanF, 5}, 3);
  CHECK(s.histogram == std::vector<uint64_t>{0, 0, 3});
  CHECK(s.mean == 5);
  CHECK(s.std == 0);
  CHECK(s.min == 5);
  CHECK(s.max == 5);
}

TEST_CASE("no finite values: NaN summaries and an all-zero histogram") {
  for (const std::vector<float>& values :
       {std::vector<float>{kNanF, kInfF, -kInfF}, std::vector<float>{}}) {
    const Stats s = statsOf(values, 5);
    CHECK(s.count == values.size());
    CHECK(s.finiteCount == 0);
    CHECK(std::isnan(s.min));
    CHECK(std::isnan(s.max));
    CHECK(std::isnan(s.mean));
    CHECK(std::isnan(s.std));
    CHECK(std::isnan(s.histogramMin));
    CHECK(std::isnan(s.histogramMax));
    CHECK(s.histogram == std::vector<uint64_t>(5, 0));
  }
}

TEST_CASE("bins == 0 gives no histogram") {
  const Stats s = statsOf({1, 2, 3}, 0);
  CHECK(s.histogram.empty());
  CHECK(s.mean == 2);
}

TEST_CASE("a Stats reused for another tensor is fully overwritten") {
  Stats s;
  REQUIRE(computeStats(Dtype::F32, bytesOf(std::vector<float>{1, kNanF}).data(), 2, 4, s));
  const std::vector<uint8_t> one = {1};
  REQUIRE(computeStats(Dtype::U8, one.data(), 1, 2, s));
  CHECK(s.count == 1);
  CHECK(s.nanCount == 0);
  CHECK(s.histogram == std::vector<uint64_t>{0, 1});
}

TEST_CASE("BF16 input") {
  // 1, -2, 0.5, NaN, -inf, -0
  const std::vector<uint16_t> raw = {0x3F80, 0xC000, 0x3F00, 0x7FC0, 0xFF80, 0x8000};
  const Stats s = statsOf(Dtype::BF16, bytesOf(raw), raw.size(), 2);
  CHECK(s.count == 6);
  CHECK(s.finiteCount == 4);
  CHECK(s.nanCount == 1);
  CHECK(s.infCount == 1);
  CHECK(s.zeroCount == 1);
  CHECK(s.min == -2);
  CHECK(s.max == 1);
  CHECK(s.mean == -0.125);
  CHECK(s.histogram == std::vector<uint64_t>{1, 3});  // edges -2, -0.5, 1
}

TEST_CASE("I64, U64 and I32 keep the precision float32 would lose") {
  const int64_t big = (int64_t{1} << 40) + 1;
  Stats s = statsOf(Dtype::I64, bytesOf(std::vector<int64_t>{big, big + 2, 0 - big}), 3, 0);
  CHECK(s.min == static_cast<double>(-big));
  CHECK(s.max == static_cast<double>(big + 2));
  CHECK(s.zeroCount == 0);

  s = statsOf(Dtype::I64, bytesOf(std::vector<int64_t>{big, big + 2}), 2, 2);
  CHECK(s.mean == static_cast<double>(big + 1));
  CHECK(s.std == 1);
  CHECK(s.histogram == std::vector<uint64_t>{1, 1});

  s = statsOf(Dtype::U64, bytesOf(std::vector<uint64_t>{UINT64_MAX, 0}), 2, 0);
  CHECK(s.max == 18446744073709551616.0);
  CHECK(s.zeroCount == 1);

  s = statsOf(Dtype::I32, bytesOf(std::vector<int32_t>{16777217, 16777219, INT32_MIN}), 3, 0);
  CHECK(s.max == 16777219);
  CHECK(s.min == -2147483648.0);
}

TEST_CASE("C64 is summarised over real and imaginary parts together") {
  const Stats s = statsOf(Dtype::C64, bytesOf(std::vector<float>{1, -1, 3, kNanF}), 2, 2);
  CHECK(s.count == 4);
  CHECK(s.finiteCount == 3);
  CHECK(s.nanCount == 1);
  CHECK(s.min == -1);
  CHECK(s.max == 3);
  CHECK(s.mean == 1);
  CHECK(s.histogram == std::vector<uint64_t>{1, 2});  // edges -1, 1, 3
}

TEST_CASE("all 256 F8_E4M3 codes") {
  std::vector<uint8_t> bytes(256);
  for (int i = 0; i < 256; ++i) bytes[i] = static_cast<uint8_t>(i);
  const Stats s = statsOf(Dtype::F8_E4M3, bytes, 256, 0);
  CHECK(s.finiteCount == 254);
  CHECK(s.nanCount == 2);
  CHECK(s.infCount == 0);
  CHECK(s.zeroCount == 2);
  CHECK(s.min == -448);
  CHECK(s.max == 448);
  CHECK(s.mean == 0);
}

TEST_CASE("F4 packs two values per byte, odd counts included") {
  const Stats s = statsOf(Dtype::F4, {0x71, 0xFF}, 3, 0);  // 0.5, 6, -6 (the last nibble unread)
  CHECK(s.count == 3);
  CHECK(s.min == -6);
  CHECK(s.max == 6);
  CHECK(s.mean == 0.5 / 3);
}

TEST_CASE("F6 has no float form: computeStats refuses and leaves its output alone") {
  const std::vector<uint8_t> bytes(3, 0);
  Stats s;
  s.count = 42;
  CHECK_FALSE(computeStats(Dtype::F6_E2M3, bytes.data(), 4, 8, s));
  CHECK_FALSE(computeStats(Dtype::F6_E3M2, bytes.data(), 4, 8, s));
  CHECK(s.count == 42);
}

TEST_CASE("F64 over a huge range: exact bins, std past the limits of double") {
  std::mt19937_64 random(5);
  std::uniform_real_distribution<double> uniform(-1e300, 1e300);
  std::vector<double> values(10007);
  for (double& v : values) v = uniform(random);
  const Stats s = statsOf(Dtype::F64, bytesOf(values), values.size(), 50);
  const Stats r = naive(values, 50);
  CHECK(s.histogram == r.histogram);
  CHECK(s.min == r.min);
  CHECK(s.max == r.max);
  CHECK_THAT(s.mean, WithinRel(r.mean, 1e-9));
  CHECK(s.std == HUGE_VAL);  // the squared deviations overflow, as stats.hpp warns
}

TEST_CASE("F64 whose range overflows a double still bins") {
  const Stats s = statsOf(Dtype::F64, bytesOf(std::vector<double>{DBL_MAX, -DBL_MAX, 0}), 3, 2);
  CHECK(s.histogram == std::vector<uint64_t>{1, 2});
  CHECK(s.mean == 0);
  CHECK(s.std == HUGE_VAL);
}

TEST_CASE("large random arrays against the naive reference") {
  std::mt19937_64 random(3);
  std::normal_distribution<double> normal(1000.0, 0.01);  // a large mean, a tiny spread
  const size_t n = 1000003;                               // not a multiple of any chunk size
  const auto special = [&](double v) {
    const uint64_t r = random() % 200;
    return r == 0 ? std::numeric_limits<double>::quiet_NaN() : r == 1 ? -HUGE_VAL : v;
  };

  SECTION("F32") {
    std::vector<float> values(n);
    for (float& v : values) v = static_cast<float>(special(normal(random)));
    checkMatches(statsOf(values, 37), naive({values.begin(), values.end()}, 37));
  }
  SECTION("F16") {
    std::vector<uint16_t> raw(n);
    for (uint16_t& h : raw) h = static_cast<uint16_t>(random());
    std::vector<float> decoded(n);
    REQUIRE(toFloat32(Dtype::F16, bytesOf(raw).data(), n, decoded.data()));
    checkMatches(statsOf(Dtype::F16, bytesOf(raw), n, 64),
                 naive({decoded.begin(), decoded.end()}, 64));
  }
  SECTION("F64") {
    std::vector<double> values(n);
    for (double& v : values) v = special(normal(random) * 1e150);
    checkMatches(statsOf(Dtype::F64, bytesOf(values), n, 1000), naive(values, 1000));
  }
  SECTION("I64") {
    std::vector<int64_t> values(n);
    for (int64_t& v : values) v = static_cast<int64_t>(random()) >> (random() % 64);
    const std::vector<double> asDouble(values.begin(), values.end());
    checkMatches(statsOf(Dtype::I64, bytesOf(values), n, 5), naive(asDouble, 5));
  }
}

// ---- StatsAccumulator: computeStats over pieces ----

namespace {

bool sameBits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

void checkIdentical(const Stats& s, const Stats& r) {
  CHECK(s.count == r.count);
  CHECK(s.finiteCount == r.finiteCount);
  CHECK(s.nanCount == r.nanCount);
  CHECK(s.infCount == r.infCount);
  CHECK(s.zeroCount == r.zeroCount);
  CHECK(sameBits(s.min, r.min));
  CHECK(sameBits(s.max, r.max));
  CHECK(sameBits(s.mean, r.mean));
  CHECK(sameBits(s.std, r.std));
  CHECK(sameBits(s.histogramMin, r.histogramMin));
  CHECK(sameBits(s.histogramMax, r.histogramMax));
  CHECK(s.histogram == r.histogram);
}

uint64_t bytesFor(Dtype dtype, uint64_t elements) {
  const unsigned bits = dtypeBits(dtype);
  return bits == 4 ? (elements + 1) / 2 : elements * bits / 8;
}

// Streams `elements` of dtype at `bytes` through an accumulator in pieces ending at `cuts`
// (element counts, even for F4), both passes when needed.
Stats streamed(Dtype dtype, const std::vector<uint8_t>& bytes, uint64_t elements, uint32_t bins,
               const std::vector<uint64_t>& cuts) {
  StatsAccumulator acc;
  REQUIRE(acc.start(dtype, bins));
  std::vector<uint64_t> ends = cuts;
  ends.push_back(elements);
  const auto feed = [&](bool histogram) {
    uint64_t at = 0;
    for (uint64_t end : ends) {
      if (end < at) continue;
      // Each piece in a buffer of its own, so nothing reads past it.
      std::vector<uint8_t> piece(bytes.begin() + bytesFor(dtype, at),
                                 bytes.begin() + bytesFor(dtype, end));
      if (histogram)
        acc.addHistogram(piece.data(), end - at);
      else
        acc.add(piece.data(), end - at);
      at = end;
    }
  };
  feed(false);
  Stats s;
  if (!acc.finish(s)) {
    CHECK_FALSE(StatsAccumulator::binsInOnePass(dtype));
    feed(true);
    acc.finishHistogram(s);
  }
  return s;
}

}  // namespace

TEST_CASE("streamed pieces give computeStats's result bit for bit, every dtype", "[stats]") {
  std::mt19937_64 rng(16);
  for (int d = 0; d < kDtypeCount; ++d) {
    const Dtype dtype = static_cast<Dtype>(d);
    if (!hasFloat32Form(dtype)) continue;
    CAPTURE(dtypeName(dtype));
    for (uint64_t elements :
         {uint64_t{0}, uint64_t{1}, uint64_t{7}, uint64_t{2047}, uint64_t{5000}, uint64_t{70001}}) {
      CAPTURE(elements);
      std::vector<uint8_t> bytes(bytesFor(dtype, elements));
      for (auto& b : bytes) b = static_cast<uint8_t>(rng());
      // Floats mostly of one scale, so the moments are not dominated by huge codes.
      if (dtype == Dtype::F32 || dtype == Dtype::C64) {
        std::normal_distribution<float> normal(0.5f, 2.0f);
        for (size_t i = 0; i + 4 <= bytes.size(); i += 4) {
          if (rng() % 50 == 0) continue;  // keep a few random bit patterns (NaN, inf)
          const float v = normal(rng);
          std::memcpy(&bytes[i], &v, 4);
        }
      }
      if (dtype == Dtype::F64) {
        std::normal_distribution<double> normal(-3.0, 1e3);
        for (size_t i = 0; i + 8 <= bytes.size(); i += 8) {
          if (rng() % 50 == 0) continue;
          const double v = normal(rng);
          std::memcpy(&bytes[i], &v, 8);
        }
      }
      for (uint32_t bins : {0u, 1u, 64u, 1000u}) {
        CAPTURE(bins);
        Stats whole;
        REQUIRE(computeStats(dtype, bytes.data(), elements, bins, whole));
        // One piece; pieces of one element; random cuts (even for F4); cuts on the chunks.
        std::vector<std::vector<uint64_t>> plans = {{}};
        std::vector<uint64_t> ones, random, aligned;
        if (elements <= 5000)
          for (uint64_t i = 2; i < elements; i += 2) ones.push_back(i);
        for (uint64_t at = 0; at < elements;) {
          at += 2 * (1 + rng() % 3000);
          if (at < elements) random.push_back(at);
        }
        for (uint64_t at = 8192; at < elements; at += 8192) aligned.push_back(at);
        plans.push_back(ones);
        plans.push_back(random);
        plans.push_back(aligned);
        for (const auto& cuts : plans)
          checkIdentical(streamed(dtype, bytes, elements, bins, cuts), whole);
      }
    }
  }
}

TEST_CASE("streamed: the histogram table bins all 65536 F16 and BF16 codes as computeStats",
          "[stats]") {
  for (Dtype dtype : {Dtype::F16, Dtype::BF16, Dtype::I16, Dtype::U16}) {
    std::vector<uint8_t> bytes(2 * 65536);
    for (uint32_t c = 0; c < 65536; ++c) bytes[2 * c] = c & 0xFF, bytes[2 * c + 1] = c >> 8;
    for (uint32_t bins : {1u, 7u, 64u, 4096u}) {
      Stats whole;
      REQUIRE(computeStats(dtype, bytes.data(), 65536, bins, whole));
      checkIdentical(streamed(dtype, bytes, 65536, bins, {1000, 30000}), whole);
    }
  }
}

TEST_CASE("streamed: edge cases (no finite values, all equal, F6 refused, restart)", "[stats]") {
  const std::vector<float> nan(3000, kNanF), same(5000, 2.5f);
  checkIdentical(streamed(Dtype::F32, bytesOf(nan), nan.size(), 16, {1000}), statsOf(nan, 16));
  checkIdentical(streamed(Dtype::F32, bytesOf(same), same.size(), 16, {1000}), statsOf(same, 16));
  StatsAccumulator acc;
  CHECK_FALSE(acc.start(Dtype::F6_E2M3, 8));
  // A second start forgets the first tensor.
  REQUIRE(acc.start(Dtype::F32, 4));
  const std::vector<float> a = {1, 2, 3};
  acc.add(bytesOf(a).data(), 3);
  REQUIRE(acc.start(Dtype::F32, 4));
  const std::vector<float> b = {10, 20, kInfF};
  acc.add(bytesOf(b).data(), 3);
  Stats s;
  if (!acc.finish(s)) {
    acc.addHistogram(bytesOf(b).data(), 3);
    acc.finishHistogram(s);
  }
  checkIdentical(s, statsOf(b, 4));
}
