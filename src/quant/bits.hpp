// Bit casts and exact powers of two for the kernels, free of memory: no tables, no locals whose
// address is taken once optimised (the module must not use the shadow stack).
#pragma once

#include <stdint.h>

namespace st::quant {

inline float asFloat(uint32_t u) { return __builtin_bit_cast(float, u); }
inline uint32_t asBits(float f) { return __builtin_bit_cast(uint32_t, f); }

// 2^e for e in [-126, 127], a normal float.
inline float pow2(int32_t e) { return asFloat(uint32_t(e + 127) << 23); }

// Loads that need no alignment (the scale tensors are read where the caller put them).
inline uint32_t load32(const void* p, uint64_t i) {
  uint32_t v;
  __builtin_memcpy(&v, static_cast<const uint8_t*>(p) + i * 4, 4);
  return v;
}
inline uint16_t load16(const void* p, uint64_t i) {
  uint16_t v;
  __builtin_memcpy(&v, static_cast<const uint8_t*>(p) + i * 2, 2);
  return v;
}

}  // namespace st::quant
