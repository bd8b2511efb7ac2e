// The small float formats, decoded arithmetically (no tables): E4M3FN, FP4 E2M1, and the scale
// types F16 and BF16, each converted to float32 exactly.
#pragma once

#include <stdint.h>

#include "bits.hpp"
#include "kernels.hpp"

namespace st::quant {

// 2^120 and 2^126: the distances between the small formats' exponent biases and float32's.
inline float e4m3Bias() { return asFloat(uint32_t(120 + 127) << 23); }
inline float fp4Bias() { return asFloat(uint32_t(126 + 127) << 23); }

// E4M3FN: bits 0-6 moved to float32's exponent and mantissa (subnormals included) times 2^120;
// no infinities; NaN at 0x7F and 0xFF.
inline float e4m3(uint32_t b) {
  uint32_t magnitude = b & 0x7F;
  if (magnitude == 0x7F) return asFloat(0x7FC00000u | ((b & 0x80) << 24));
  float v = asFloat(magnitude << 20) * e4m3Bias();
  return asFloat(asBits(v) | ((b & 0x80) << 24));
}

// FP4 E2M1 (0, 0.5, 1, 1.5, 2, 3, 4, 6 and their negatives): bits 0-2 moved to float32's
// exponent and mantissa, as a float times 2^-126; sign from bit 3. Multiply by fp4Bias() for
// the value (exact).
inline float fp4Raw(uint32_t n) { return asFloat(((n & 7) << 22) | ((n & 8) << 28)); }
inline float fp4(uint32_t n) { return fp4Raw(n) * fp4Bias(); }

inline float f16(uint32_t h) {
  uint32_t sign = (h & 0x8000) << 16;
  uint32_t exponent = (h >> 10) & 31;
  uint32_t mantissa = h & 0x3FF;
  if (exponent == 31) return asFloat(sign | 0x7F800000u | (mantissa << 13));
  if (exponent == 0) {
    // mantissa * 2^-24, exact (mantissa < 2^10).
    float v = float(mantissa) * asFloat(uint32_t(127 - 24) << 23);
    return asFloat(asBits(v) | sign);
  }
  return asFloat(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

inline float bf16(uint32_t h) { return asFloat(h << 16); }

// Element i of a scale tensor of the given type (kScale*), as float32.
inline float scaleAt(const void* p, uint32_t dtype, uint64_t i) {
  switch (dtype) {
    case kScaleF16: return f16(load16(p, i));
    case kScaleBF16: return bf16(load16(p, i));
    case kScaleE4M3: return e4m3(static_cast<const uint8_t*>(p)[i]);
    default: return asFloat(load32(p, i));
  }
}

}  // namespace st::quant
