#include "stats.hpp"

#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>

#include "convert.hpp"

namespace st {
namespace {

constexpr size_t kChunkBytes = 8192;  // the decode buffer, on the stack (wasm's is 64 KiB)
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

using Moments = StatsAccumulator::Moments;

template <class T>
inline bool isFinite(T x) {
  return std::fabs(x) <= std::numeric_limits<T>::max();  // false for NaN and infinities
}

// Pass 1 runs on 16-byte vectors (GCC/Clang vector extensions): SSE natively, SIMD128 in
// wasm with -msimd128, plain scalar code elsewhere. The compilers do not vectorize these
// reductions themselves, as that would reorder floating-point adds.
template <class T>
struct Vec {
  typedef T V __attribute__((vector_size(16)));
  using Mask = decltype(V{} < V{});  // lanes of all ones (true) or zero, as wide as T
  static constexpr size_t kWidth = 16 / sizeof(T);
};
using Double2 = Vec<double>::V;

// The widest vector's lane count: chunks are padded with NaN to a multiple of it.
constexpr size_t kLanes = Vec<float>::kWidth;

template <class V, class Mask>
inline V blend(Mask m, V yes, V no) {
  const Mask chosen = (m & reinterpret_cast<Mask>(yes)) | (~m & reinterpret_cast<Mask>(no));
  return reinterpret_cast<V>(chosen);
}

// Adds a vector's lanes, as doubles, to the two double accumulators.
inline void addWide(Vec<float>::V x, Double2& a, Double2& b) {
  a += Double2{x[0], x[1]};
  b += Double2{x[2], x[3]};
}
inline void addWide(Vec<double>::V x, Double2& a, Double2&) { a += x; }

// Squared deviations from `mean` of the lanes where `ok`, as doubles.
inline void addSquares(Vec<float>::V x, Vec<float>::Mask ok, double mean, Double2& a, Double2& b) {
  const Double2 d0 = Double2{x[0], x[1]} - mean, d1 = Double2{x[2], x[3]} - mean;
  a += blend(Vec<double>::Mask{ok[0], ok[1]}, d0 * d0, Double2{});
  b += blend(Vec<double>::Mask{ok[2], ok[3]}, d1 * d1, Double2{});
}
inline void addSquares(Vec<double>::V x, Vec<double>::Mask ok, double mean, Double2& a, Double2&) {
  const Double2 d = x - mean;
  a += blend(ok, d * d, Double2{});
}

// Pass 1 over one decoded chunk, `padded` >= n values long, the tail after n being NaN, which
// no accumulator below counts (NaNs are derived from n). Non-finite values are masked out
// rather than branched around.
template <class T>
void accumulate(const T* v, size_t n, size_t padded, Stats& s, Moments& total) {
  using V = typename Vec<T>::V;
  using Mask = typename Vec<T>::Mask;
  constexpr size_t kWidth = Vec<T>::kWidth;
  const V maxFinite = V{} + std::numeric_limits<T>::max();
  const V infinity = V{} + std::numeric_limits<T>::infinity();
  const Mask absBits = ~reinterpret_cast<Mask>(-V{});  // all but the sign bit (of -0.0)
  Mask finiteLane = {}, infLane = {}, zeroLane = {};   // each counts down: a true lane is -1
  Double2 sumA = {}, sumB = {};
  V lo = infinity, hi = -infinity;
  for (size_t i = 0; i < padded; i += kWidth) {
    V x;
    std::memcpy(&x, v + i, sizeof x);
    const V a = reinterpret_cast<V>(reinterpret_cast<Mask>(x) & absBits);
    const Mask ok = a <= maxFinite;
    finiteLane += ok;
    infLane += a == infinity;
    zeroLane += x == V{};
    addWide(blend(ok, x, V{}), sumA, sumB);
    lo = blend(ok & (x < lo), x, lo);
    hi = blend(ok & (x > hi), x, hi);
  }
  uint64_t finite = 0, inf = 0, zero = 0;
  T lowest = lo[0], highest = hi[0];
  for (size_t l = 0; l < kWidth; ++l) {
    finite -= finiteLane[l], inf -= infLane[l], zero -= zeroLane[l];
    lowest = lo[l] < lowest ? lo[l] : lowest;
    highest = hi[l] > highest ? hi[l] : highest;
  }
  const Double2 sums = sumA + sumB;
  const double sum = sums[0] + sums[1];
  s.count += n;
  s.infCount += inf;
  s.nanCount += n - finite - inf;
  s.zeroCount += zero;
  if (finite == 0) return;

  // The chunk's sum of squares about its own mean (a second pass over data still in cache)
  // avoids the cancellation of sum(x^2) - n mean^2.
  const double mean = sum / static_cast<double>(finite);
  Double2 m2A = {}, m2B = {};
  for (size_t i = 0; i < padded; i += kWidth) {
    V x;
    std::memcpy(&x, v + i, sizeof x);
    const V a = reinterpret_cast<V>(reinterpret_cast<Mask>(x) & absBits);
    addSquares(x, a <= maxFinite, mean, m2A, m2B);
  }
  const Double2 m2s = m2A + m2B;
  const double m2 = m2s[0] + m2s[1];
  // Chan, Golub and LeVeque's pairwise update merges the chunk into the running totals.
  const double nA = static_cast<double>(total.n), nB = static_cast<double>(finite);
  const double delta = mean - total.mean;
  total.n += finite;
  const double nAB = static_cast<double>(total.n);
  total.mean += delta * (nB / nAB);
  total.m2 += m2 + delta * (delta * (nA * nB / nAB));  // for the first chunk: never inf x 0
  total.min = std::fmin(total.min, static_cast<double>(lowest));
  total.max = std::fmax(total.max, static_cast<double>(highest));
}

// Bin of x: min(last, floor((x * scale - lo) * perBin)).
struct Binning {
  double scale;   // 1, or the power of two that brings max - min into [2^-600, 2^600]
  double lo;      // min * scale
  double perBin;  // bins / (max * scale - lo)
  uint64_t last;  // bins - 1; bins is the slot for non-finite values
};

inline uint64_t doubleBits(double d) {
  uint64_t b;
  std::memcpy(&b, &d, sizeof b);
  return b;
}

constexpr uint64_t kMantissa = (uint64_t{1} << 52) - 1;

// Pass 2: `counts` has bins + 1 slots; non-finite values go to the extra one, which saves a
// branch per value. Adding 2^52 to the floored bin position (an integer, at most about bins)
// leaves it in the mantissa bits, without the branches wasm puts around a float-to-int
// conversion.
inline uint64_t binOf(double scaled, const Binning& b) {
  const double position = std::floor((scaled - b.lo) * b.perBin);
  const uint64_t k = doubleBits(position + 0x1p52) & kMantissa;
  return k < b.last ? k : b.last;
}

template <class T>
void bin(const T* v, size_t n, const Binning& b, uint64_t* counts) {
  for (size_t i = 0; i < n; ++i) {
    const bool ok = isFinite(v[i]);
    const uint64_t k = binOf(ok ? static_cast<double>(v[i]) * b.scale : b.lo, b);
    ++counts[ok ? k : b.last + 1];
  }
}

// Types whose values a float cannot hold exactly are read as double.
bool decodesToDouble(Dtype dtype) {
  return dtype == Dtype::I32 || dtype == Dtype::U32 || dtype == Dtype::I64 || dtype == Dtype::U64 ||
         dtype == Dtype::F64;
}

template <class T>
inline void castEach(const uint8_t* src, size_t n, double* dst) {
  for (size_t i = 0; i < n; ++i) {
    T v;
    std::memcpy(&v, src + i * sizeof v, sizeof v);
    dst[i] = static_cast<double>(v);
  }
}

void decodeChunk(Dtype dtype, const uint8_t* src, size_t n, float* dst) {
  toFloat32(dtype, src, n, dst);
}

void decodeChunk(Dtype dtype, const uint8_t* src, size_t n, double* dst) {
  switch (dtype) {
    case Dtype::I32: castEach<int32_t>(src, n, dst); break;
    case Dtype::U32: castEach<uint32_t>(src, n, dst); break;
    case Dtype::I64: castEach<int64_t>(src, n, dst); break;
    case Dtype::U64: castEach<uint64_t>(src, n, dst); break;
    default:  // F64
      castEach<double>(src, n, dst);
      break;
  }
}

// Fills `out`'s moments, extremes and histogram range from `total` and sizes its histogram
// (zero counts). Returns true, with `b` set, when the finite values still have to be binned.
bool finishMoments(const Moments& total, uint32_t bins, Stats& out, Binning& b) {
  out.finiteCount = total.n;
  out.histogram = std::vector<uint64_t>(bins);
  if (total.n == 0) {
    out.min = out.max = out.mean = out.std = kNan;
    out.histogramMin = out.histogramMax = kNan;
    return false;
  }
  out.min = out.histogramMin = total.min;
  out.max = out.histogramMax = total.max;
  out.mean = total.mean;
  out.std = std::sqrt(total.m2 / static_cast<double>(total.n));
  if (bins == 0) return false;
  if (total.min == total.max) {
    out.histogram.back() = total.n;
    return false;
  }
  // A power-of-two scale brings a spread (overflowing included) outside [2^-600, 2^600] inside,
  // so that bins / spread is a normal number and keeps its precision. Scaling is exact except
  // for values far below one bin's width.
  const double spread = total.max - total.min;
  b.scale = !(spread <= 0x1p600) ? 0x1p-600 : spread < 0x1p-600 ? 0x1p600 : 1.0;
  b.lo = total.min * b.scale;
  b.perBin = bins / (total.max * b.scale - b.lo);
  b.last = bins - 1;
  return true;
}

// Decodes `n` values at `src` (n <= the chunk's values) into a stack buffer padded with NaN to
// whole lanes (the chunk size is a multiple of kLanes and even, so an F4 chunk starts on a byte
// boundary), and hands it to `visit` with its count and that count rounded up.
template <class T, class Visit>
void decodePadded(Dtype dtype, const uint8_t* src, size_t n, Visit visit) {
  T buffer[kChunkBytes / sizeof(T)];
  decodeChunk(dtype, src, n, buffer);
  const size_t padded = (n + kLanes - 1) / kLanes * kLanes;
  for (size_t i = n; i < padded; ++i) buffer[i] = std::numeric_limits<T>::quiet_NaN();
  visit(static_cast<const T*>(buffer), n, padded);
}

// Counts the codes of `n` values at `src`: bytes, little-endian uint16s, or F4 nibbles (value
// 2k in byte k's low nibble).
void countCodes(unsigned bits, const uint8_t* src, size_t n, uint64_t* codes) {
  if (bits == 8) {
    for (size_t i = 0; i < n; ++i) ++codes[src[i]];
  } else if (bits == 16) {
    for (size_t i = 0; i < n; ++i) ++codes[src[2 * i] | unsigned(src[2 * i + 1]) << 8];
  } else {  // 4
    for (size_t i = 0; i < n; ++i) ++codes[(src[i / 2] >> (4 * (i & 1))) & 15];
  }
}

}  // namespace

bool computeStats(Dtype dtype, const uint8_t* data, uint64_t elements, uint32_t bins, Stats& out) {
  if (elements > SIZE_MAX / 8) return false;
  StatsAccumulator acc;
  if (!acc.start(dtype, bins, StatsAccumulator::codesPayOff(dtype, double(elements)))) return false;
  acc.add(data, elements);
  if (!acc.finish(out)) {
    acc.addHistogram(data, elements);
    acc.finishHistogram(out);
  }
  return true;
}

bool StatsAccumulator::binsInOnePass(Dtype dtype) {
  return dtype != Dtype::C64 && dtypeBits(dtype) <= 16;
}

bool StatsAccumulator::start(Dtype dtype, uint32_t bins, bool countCodes) {
  if (!hasFloat32Form(dtype)) return false;
  perElement_ = dtype == Dtype::C64 ? 2 : 1;
  dtype_ = dtype == Dtype::C64 ? Dtype::F32 : dtype;
  wide_ = decodesToDouble(dtype_);
  bins_ = bins;
  chunkValues_ = kChunkBytes / (wide_ ? sizeof(double) : sizeof(float));
  stats_ = Stats();
  total_ = Moments();
  codes_.assign(countCodes && bins > 0 && binsInOnePass(dtype) ? size_t{1} << dtypeBits(dtype) : 0,
                0);
  carry_.resize(kChunkBytes);
  carryValues_ = 0;
  pending_ = false;
  return true;
}

uint64_t StatsAccumulator::valueBytes(uint64_t values) const {
  const unsigned bits = dtypeBits(dtype_);
  return bits == 4 ? (values + 1) / 2 : values * (bits / 8);
}

void StatsAccumulator::addChunk(const uint8_t* data, size_t values) {
  const auto visit = [&](const auto* v, size_t n, size_t padded) {
    accumulate(v, n, padded, stats_, total_);
  };
  if (wide_)
    decodePadded<double>(dtype_, data, values, visit);
  else
    decodePadded<float>(dtype_, data, values, visit);
  if (!codes_.empty()) countCodes(dtypeBits(dtype_), data, values, codes_.data());
}

void StatsAccumulator::add(const uint8_t* data, uint64_t elements) {
  uint64_t values = elements * perElement_;
  if (carryValues_ > 0) {
    // Complete the chunk begun by earlier pieces. (F4: the carry holds an even count.)
    const uint64_t room = chunkValues_ - carryValues_;
    const uint64_t take = values < room ? values : room;
    std::memcpy(carry_.data() + valueBytes(carryValues_), data, valueBytes(take));
    carryValues_ += take;
    data += valueBytes(take);
    values -= take;
    if (carryValues_ < chunkValues_) return;
    addChunk(carry_.data(), chunkValues_);
    carryValues_ = 0;
  }
  for (; values >= chunkValues_; values -= chunkValues_) {
    addChunk(data, chunkValues_);
    data += valueBytes(chunkValues_);
  }
  if (values > 0) {
    std::memcpy(carry_.data(), data, valueBytes(values));
    carryValues_ = values;
  }
}

bool StatsAccumulator::finish(Stats& out) {
  if (carryValues_ > 0) addChunk(carry_.data(), carryValues_);
  carryValues_ = 0;
  Binning b;
  if (!finishMoments(total_, bins_, stats_, b)) {
    out = stats_;
    return true;
  }
  scale_ = b.scale, lo_ = b.lo, perBin_ = b.perBin;
  if (codes_.empty()) {
    out = stats_;
    stats_.histogram.push_back(0);  // the slot for non-finite values, until finishHistogram
    pending_ = true;
    return false;
  }
  // Every code's value binned once, its count added: what binning each value would give.
  for (size_t code = 0; code < codes_.size(); ++code) {
    if (codes_[code] == 0) continue;
    const uint8_t bytes[2] = {static_cast<uint8_t>(code), static_cast<uint8_t>(code >> 8)};
    float v;
    toFloat32(dtype_, bytes, 1, &v);
    if (isFinite(v)) stats_.histogram[binOf(static_cast<double>(v) * b.scale, b)] += codes_[code];
  }
  out = stats_;
  return true;
}

void StatsAccumulator::addHistogram(const uint8_t* data, uint64_t elements) {
  if (!pending_) return;
  const Binning b{scale_, lo_, perBin_, bins_ - 1};
  const uint64_t values = elements * perElement_;
  for (uint64_t first = 0; first < values; first += chunkValues_) {
    const size_t n =
        static_cast<size_t>(values - first < chunkValues_ ? values - first : chunkValues_);
    const auto visit = [&](const auto* v, size_t count, size_t) {
      bin(v, count, b, stats_.histogram.data());
    };
    if (wide_)
      decodePadded<double>(dtype_, data + valueBytes(first), n, visit);
    else
      decodePadded<float>(dtype_, data + valueBytes(first), n, visit);
  }
}

void StatsAccumulator::finishHistogram(Stats& out) {
  if (pending_) stats_.histogram.pop_back();
  pending_ = false;
  out = stats_;
}

}  // namespace st
