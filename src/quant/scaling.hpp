// An FP4 value (exact, a normal float or zero) times 2^e, e = scale - 127 (mxfp4, ldexp
// semantics): one multiply by 2^e when 2^e is a normal float (scale 1-254), one rounding of the
// exact product. Scale 0 and 255 (2^e subnormal or out of range) multiply twice, by 2^-1 or 2
// (exact: the values stay normal) then by 2^-126 or 2^127: again one rounding of the exact
// product (an overflow of the first product only where the exact one overflows too).
#pragma once

#include <stdint.h>

#include "bits.hpp"

namespace st::quant {

struct Scaling {
  float p;  // 1 when one multiply does
  float q;
};

inline Scaling mxScaling(uint32_t scale) {
  if (scale == 0) return {0.5f, pow2(-126)};
  if (scale == 255) return {2.0f, pow2(127)};
  return {1.0f, pow2(int32_t(scale) - 127)};
}

}  // namespace st::quant
