// A small float decoded to float32 is a power of two away from its bit pattern read as a float:
// raw * 2^k, with raw exact (a subnormal or tiny float) and the product exact. Its scaled value
// f32(value * s) is then one rounding of the exact product raw * 2^k * s. When 2^k * s is a
// finite float it is exact too, and raw * (2^k * s) is that same single rounding: one multiply
// instead of two, same bits. Otherwise (2^k * s overflows) the kernels multiply twice, by 2^k
// then by s.
#pragma once

#include <stdint.h>

#include "bits.hpp"

namespace st::quant {

struct Scaling {
  float p;  // 1 when one multiply does
  float q;
};

// For value = raw * pow2k (a power of two) times s.
inline Scaling scaling(float pow2k, float s) {
  const float folded = pow2k * s;
  if ((asBits(folded) & 0x7FFFFFFFu) != 0x7F800000u || (asBits(s) & 0x7FFFFFFFu) == 0x7F800000u)
    return {1.0f, folded};
  return {pow2k, s};
}

}  // namespace st::quant
