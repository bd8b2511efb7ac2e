// Wasm SIMD helpers of the float kernels: 16 small-float codes, one per byte lane, widened to
// 16 float32 bit patterns with the same arithmetic as the scalar decoders in fp4_fp8.hpp, then
// multiplied (see scaling.hpp for why one multiply gives the same bits as two).
#pragma once

#ifdef __wasm_simd128__
#include <wasm_simd128.h>

namespace st::quant {

// Two byte vectors (low and high byte of each float's upper half; the lower half is zero) to
// 4 x 4 floats, times p (when kTwo) then q, stored at dst.
template <bool kTwo>
inline void storeUpperHalves(v128_t lo, v128_t hi, float* dst, v128_t p, v128_t q) {
  const v128_t zero = wasm_i32x4_splat(0);
  v128_t a = wasm_i8x16_shuffle(lo, hi, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  v128_t b =
      wasm_i8x16_shuffle(lo, hi, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  v128_t f[4] = {wasm_i16x8_shuffle(zero, a, 0, 8, 1, 9, 2, 10, 3, 11),
                 wasm_i16x8_shuffle(zero, a, 4, 12, 5, 13, 6, 14, 7, 15),
                 wasm_i16x8_shuffle(zero, b, 0, 8, 1, 9, 2, 10, 3, 11),
                 wasm_i16x8_shuffle(zero, b, 4, 12, 5, 13, 6, 14, 7, 15)};
  for (int k = 0; k < 4; k++) {
    v128_t v = kTwo ? wasm_f32x4_mul(f[k], p) : f[k];
    wasm_v128_store(dst + 4 * k, wasm_f32x4_mul(v, q));
  }
}

// 16 E4M3FN bytes: float bits (b & 0x7F) << 20 with the sign of bit 7 (0x7FF00000 | sign for
// NaN, as e4m3()), times p then q.
template <bool kTwo>
inline void e4m3x16(v128_t b, float* dst, v128_t p, v128_t q) {
  v128_t nan = wasm_i8x16_eq(wasm_v128_and(b, wasm_i8x16_splat(0x7F)), wasm_i8x16_splat(0x7F));
  // Byte-wise shifts through 16-bit ones (native on x86 and ARM; 8-bit ones are emulated), masked
  // so that no bit crosses into the other byte of the pair.
  v128_t lo = wasm_i16x8_shl(wasm_v128_and(b, wasm_i8x16_splat(0x0F)), 4);
  v128_t hi = wasm_v128_or(wasm_v128_and(b, wasm_i8x16_splat(char(0x80))),
                           wasm_v128_and(wasm_u16x8_shr(b, 4), wasm_i8x16_splat(7)));
  hi = wasm_v128_bitselect(wasm_v128_or(b, wasm_i8x16_splat(0x7F)), hi, nan);
  lo = wasm_v128_or(lo, wasm_v128_and(nan, wasm_i8x16_splat(char(0xF0))));
  storeUpperHalves<kTwo>(lo, hi, dst, p, q);
}

// 16 FP4 E2M1 codes (0-15, one a byte): float bits (n & 7) << 22 with the sign of bit 3, times p
// then q.
template <bool kTwo>
inline void fp4x16(v128_t n, float* dst, v128_t p, v128_t q) {
  // Byte-wise shifts through 16-bit ones, masked as in e4m3x16.
  v128_t lo = wasm_i16x8_shl(wasm_v128_and(n, wasm_i8x16_splat(3)), 6);
  v128_t hi = wasm_v128_or(wasm_i16x8_shl(wasm_v128_and(n, wasm_i8x16_splat(8)), 4),
                           wasm_v128_and(wasm_u16x8_shr(n, 2), wasm_i8x16_splat(1)));
  storeUpperHalves<kTwo>(lo, hi, dst, p, q);
}

// The high nibbles of packed bytes, one a byte.
inline v128_t highNibbles(v128_t b) {
  return wasm_v128_and(wasm_u16x8_shr(b, 4), wasm_i8x16_splat(15));
}

// Code 8 (-0) as code 0 (+0): ModelOpt's table has a plain 0 there.
inline v128_t plusZero(v128_t n) {
  const v128_t eight = wasm_i8x16_splat(8);
  return wasm_v128_andnot(n, wasm_v128_and(wasm_i8x16_eq(n, eight), eight));
}

// Packed bytes (low nibble first) to codes in element order: lanes 0-7 of b give 16 codes
// (low), lanes 8-15 the next 16 (high).
inline v128_t nibblesLow(v128_t lo, v128_t hi) {
  return wasm_i8x16_shuffle(lo, hi, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
}
inline v128_t nibblesHigh(v128_t lo, v128_t hi) {
  return wasm_i8x16_shuffle(lo, hi, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
}

// Four E4M3FN bytes (the low 32 bits of b) to four floats, as e4m3() does.
inline v128_t e4m3x4(v128_t b) {
  v128_t u = wasm_u32x4_extend_low_u16x8(wasm_u16x8_extend_low_u8x16(b));
  v128_t magnitude = wasm_v128_and(u, wasm_i32x4_splat(0x7F));
  v128_t sign = wasm_i32x4_shl(wasm_v128_and(u, wasm_i32x4_splat(0x80)), 24);
  v128_t v = wasm_f32x4_mul(wasm_i32x4_shl(magnitude, 20),
                            wasm_f32x4_splat(__builtin_bit_cast(float, uint32_t(247) << 23)));
  v = wasm_v128_or(v, sign);
  v128_t nan = wasm_i32x4_eq(magnitude, wasm_i32x4_splat(0x7F));
  return wasm_v128_bitselect(wasm_v128_or(sign, wasm_i32x4_splat(0x7FF00000)), v, nan);
}

}  // namespace st::quant
#endif
