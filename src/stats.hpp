// Summary statistics of a tensor's values, for `Tensor.stats()` and the CLI's `stats`.
//
// Safe on any bytes: every bit pattern decodes to a defined value (see convert.hpp). Reads
// only the tensor's bytes, never copies the tensor (it is decoded in chunks into an 8 KiB
// stack buffer), and allocates only the histogram. No exceptions, no I/O.
#pragma once
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "dtype.hpp"

namespace st {

struct Stats {
  uint64_t count = 0;        // values looked at (2 x elements for C64)
  uint64_t finiteCount = 0;  // the values min, max, mean, std and the histogram describe
  uint64_t nanCount = 0;
  uint64_t infCount = 0;   // +inf and -inf
  uint64_t zeroCount = 0;  // +0 and -0 (integers: 0; BOOL: false)
  double min = 0;          // these six are NaN when finiteCount == 0
  double max = 0;
  double mean = 0;
  double std = 0;           // population standard deviation (divides by finiteCount)
  double histogramMin = 0;  // the histogram's range: min and max of the finite values
  double histogramMax = 0;
  // `bins` equal-width bins over [histogramMin, histogramMax]: a finite value v goes to bin
  // min(bins - 1, floor((v - min) x (bins / (max - min)))), computed in double, so bin k holds
  // [min + k w, min + (k+1) w) up to rounding and max is in the last bin. (Values and range
  // are first scaled by 2^-600 when max - min is above 2^600 or overflows, by 2^600 when it
  // is below 2^-600, which keeps the arithmetic in normal numbers.) When min == max every
  // finite value is in the last bin; with no finite values all bins are zero.
  std::vector<uint64_t> histogram;
};

// Computes `out` over the values of `elements` elements of `dtype` at `data` (the tensor's
// bytes, as for toFloat32). Values are decoded as toFloat32 does, except that I32, U32, I64,
// U64 and F64 are read as double so they keep their precision (I64/U64 beyond 2^53 round to
// the nearest double). C64 is treated as 2 x elements real values: real and imaginary parts
// together, not magnitudes. Accumulation is in double: per chunk an exact-mean two-pass sum of
// squares, chunks merged with Chan et al.'s formula. `bins` == 0 leaves the histogram empty.
// Only F64 can reach the limits of double arithmetic: a spread of values beyond about 1e154
// overflows std to infinity (past about 1e308, mean too), one below about 1e-154 underflows it
// to 0.
// Returns false, leaving `out` untouched, for the F6 types or an `elements` too large to
// describe an in-memory buffer. It is the StatsAccumulator below fed the whole tensor at once.
bool computeStats(Dtype dtype, const uint8_t* data, uint64_t elements, uint32_t bins, Stats& out);

// The same statistics over a tensor handed in pieces (f.stats streams a tensor larger than the
// heap through it), bit for bit what computeStats gives for the concatenated pieces, wherever
// they are cut: pieces are gathered into fixed decode chunks (8 KiB of decoded values: 2048
// values, 1024 for the types read as double) and the chunks merged in order. A piece that starts
// and ends on those chunks is read in place; only the ends of others are copied (at most one
// chunk).
//
// The histogram needs min and max, known only at the end. For dtypes of at most 16 bits the
// pass counts every code in a table (2^bits counts: 512 KiB for 16 bits) and bins the table at
// the end, so one pass does it all. Wider dtypes (32 and 64 bits, C64) need a second pass over
// the same pieces: finish() returns false, then addHistogram() each piece again (in any order,
// cut anywhere on elements) and finishHistogram().
class StatsAccumulator {
 public:
  StatsAccumulator() = default;
  StatsAccumulator(const StatsAccumulator&) = delete;
  StatsAccumulator& operator=(const StatsAccumulator&) = delete;

  // Starts over for a tensor of `dtype` with `bins` bins. False for the F6 types (no values).
  // countCodes false: no code table, so the histogram takes a second pass for every dtype
  // (cheaper for a tensor with fewer values than the table has codes).
  bool start(Dtype dtype, uint32_t bins, bool countCodes = true);
  // The next `elements` elements at `data`. F4: every piece but the last holds an even count
  // (whole bytes). C64: `elements` complex values.
  void add(const uint8_t* data, uint64_t elements);
  // Ends the first pass and fills `out`: everything, when it returns true; all but the
  // histogram's counts (zero until finishHistogram) when it returns false.
  bool finish(Stats& out);
  // The second pass, only after finish() returned false: the same elements again.
  void addHistogram(const uint8_t* data, uint64_t elements);
  void finishHistogram(Stats& out);

  // Whether `dtype` can have its histogram made in the first pass (at most 16 bits; not C64).
  static bool binsInOnePass(Dtype dtype);
  // Whether a code table pays off for `elements` values of `dtype` (start's countCodes): one
  // pass does, once there are more values than codes (2^16 for 16 bits).
  static bool codesPayOff(Dtype dtype, double elements) {
    return binsInOnePass(dtype) && elements >= double(uint64_t{1} << dtypeBits(dtype));
  }

  // Mean and sum of squared deviations of the finite values seen so far, with their extremes.
  struct Moments {
    uint64_t n = 0;
    double mean = 0;
    double m2 = 0;
    double min = std::numeric_limits<double>::infinity();
    double max = -std::numeric_limits<double>::infinity();
  };

 private:
  void addChunk(const uint8_t* data, size_t values);
  uint64_t valueBytes(uint64_t values) const;

  Dtype dtype_ = Dtype::F32;  // C64 runs as F32, over twice the elements
  uint32_t perElement_ = 1;   // values per element: 2 for C64
  bool wide_ = false;         // decoded as double
  uint32_t bins_ = 0;
  size_t chunkValues_ = 0;  // values per decode chunk (computeStats's)
  Stats stats_;
  Moments total_;
  std::vector<uint64_t> codes_;  // one count per code (binsInOnePass), else empty
  std::vector<uint8_t> carry_;   // the first values of a decode chunk not yet complete
  size_t carryValues_ = 0;
  bool pending_ = false;  // finish() returned false: histogram_ has the extra slot
  // Pass 2's binning (see computeStats); histogram_ has a slot past the last for non-finite.
  double scale_ = 1, lo_ = 0, perBin_ = 0;
};

}  // namespace st
