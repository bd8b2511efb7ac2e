// Summary statistics of a tensor's values, for `Tensor.stats()` and the CLI's `stats`.
//
// Safe on any bytes: every bit pattern decodes to a defined value (see convert.hpp). Reads
// only the tensor's bytes, never copies the tensor (it is decoded in chunks into an 8 KiB
// stack buffer), and allocates only the histogram. No exceptions, no I/O.
#pragma once
#include <cstdint>
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
// describe an in-memory buffer.
bool computeStats(Dtype dtype, const uint8_t* data, uint64_t elements, uint32_t bins, Stats& out);

}  // namespace st
