// The small float formats, decoded arithmetically (no tables): E4M3FN, FP4 E2M1, and the scale
// types F16 and BF16, each converted to float32 exactly.
#pragma once

#include <stdint.h>

#include "bits.hpp"
#include "kernels.hpp"

namespace st::quant {

// E4M3FN by integer operations: a normal code's exponent rebiased by 120 (bits 0-6 moved to
// float32's exponent and mantissa), a subnormal's mantissa times 2^-9 (exact); no infinities; NaN
// at 0x7F and 0xFF, as PyTorch widens it: 0x7FF00000 with the sign (the mantissa bits in place; a
// quiet NaN that multiplications carry through on common engines). No subnormal float is
// multiplied (slow on x86).
inline float e4m3(uint32_t b) {
  const uint32_t magnitude = b & 0x7F;
  const uint32_t sign = (b & 0x80) << 24;
  if (magnitude == 0x7F) return asFloat(0x7FF00000u | sign);
  if (magnitude >= 8) return asFloat(sign | ((magnitude << 20) + (120u << 23)));
  return asFloat(asBits(float(magnitude) * asFloat(uint32_t(118) << 23)) | sign);
}

// FP4 E2M1 (0, 0.5, 1, 1.5, 2, 3, 4, 6 and their negatives) by integer operations, a normal
// float32 (no subnormal float is multiplied: slow on x86): bits 0-2 moved to float32's exponent
// and mantissa, rebiased by 126 (code 1, 0.5, has no mantissa bit); sign from bit 3.
inline float fp4(uint32_t n) {
  const uint32_t m = n & 7;
  const uint32_t magnitude = m ? (m << 22) + (126u << 23) - (m == 1 ? 1u << 22 : 0u) : 0u;
  return asFloat(magnitude | ((n & 8) << 28));
}

// F16: bits 0-14 moved to float32's exponent and mantissa (subnormals included) times 2^112;
// infinities and NaNs (exponent 31) kept as such.
inline float f16(uint32_t h) {
  const uint32_t sign = (h & 0x8000) << 16;
  if ((h & 0x7C00) == 0x7C00) return asFloat(sign | 0x7F800000u | ((h & 0x3FF) << 13));
  const float v = asFloat((h & 0x7FFF) << 13) * asFloat(uint32_t(112 + 127) << 23);
  return asFloat(asBits(v) | sign);
}

inline float bf16(uint32_t h) { return asFloat(h << 16); }

// Element i of a scale tensor of type D (kScale*), as float32.
template <uint32_t D>
inline float scaleOf(const void* p, uint64_t i) {
  if (D == kScaleF16) return f16(load16(p, i));
  if (D == kScaleBF16) return bf16(load16(p, i));
  if (D == kScaleE4M3) return e4m3(static_cast<const uint8_t*>(p)[i]);
  return asFloat(load32(p, i));
}

// The same for a type known at run time.
inline float scaleAt(const void* p, uint32_t dtype, uint64_t i) {
  switch (dtype) {
    case kScaleF16: return scaleOf<kScaleF16>(p, i);
    case kScaleBF16: return scaleOf<kScaleBF16>(p, i);
    case kScaleE4M3: return scaleOf<kScaleE4M3>(p, i);
    default: return scaleOf<kScaleF32>(p, i);
  }
}

// Calls f with the scale type as a template argument (std::integral_constant-like).
template <uint32_t D>
struct ScaleType {
  static constexpr uint32_t value = D;
};
template <class F>
inline void withScaleType(uint32_t dtype, F&& f) {
  switch (dtype) {
    case kScaleF16: return f(ScaleType<kScaleF16>{});
    case kScaleBF16: return f(ScaleType<kScaleBF16>{});
    case kScaleE4M3: return f(ScaleType<kScaleE4M3>{});
    default: return f(ScaleType<kScaleF32>{});
  }
}

}  // namespace st::quant
