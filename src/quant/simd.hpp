// Wasm SIMD helpers of the float kernels: 16 small-float codes, one per byte lane, widened to
// 16 float32 bit patterns with the same arithmetic as the scalar decoders in fp4_fp8.hpp.
#pragma once

#ifdef __wasm_simd128__
#include <wasm_simd128.h>

namespace st::quant {

// Two byte vectors (low and high byte of each float's upper half) to 4 x 4 floats, times p then
// q, stored at dst.
inline void storeUpperHalves(v128_t lo, v128_t hi, float* dst, v128_t p, v128_t q) {
  const v128_t zero = wasm_i32x4_splat(0);
  v128_t a = wasm_i8x16_shuffle(lo, hi, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  v128_t b =
      wasm_i8x16_shuffle(lo, hi, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  v128_t f0 = wasm_i16x8_shuffle(zero, a, 0, 8, 1, 9, 2, 10, 3, 11);
  v128_t f1 = wasm_i16x8_shuffle(zero, a, 4, 12, 5, 13, 6, 14, 7, 15);
  v128_t f2 = wasm_i16x8_shuffle(zero, b, 0, 8, 1, 9, 2, 10, 3, 11);
  v128_t f3 = wasm_i16x8_shuffle(zero, b, 4, 12, 5, 13, 6, 14, 7, 15);
  wasm_v128_store(dst, wasm_f32x4_mul(wasm_f32x4_mul(f0, p), q));
  wasm_v128_store(dst + 4, wasm_f32x4_mul(wasm_f32x4_mul(f1, p), q));
  wasm_v128_store(dst + 8, wasm_f32x4_mul(wasm_f32x4_mul(f2, p), q));
  wasm_v128_store(dst + 12, wasm_f32x4_mul(wasm_f32x4_mul(f3, p), q));
}

// 16 E4M3FN bytes: float bits (b & 0x7F) << 20 with the sign of bit 7 (0x7FC00000 | sign for
// NaN), times 2^120 (p), times the block's scale (q).
inline void e4m3x16(v128_t b, float* dst, v128_t p, v128_t q) {
  v128_t nan = wasm_i8x16_eq(wasm_v128_and(b, wasm_i8x16_splat(0x7F)), wasm_i8x16_splat(0x7F));
  v128_t lo = wasm_i8x16_shl(b, 4);
  v128_t hi = wasm_v128_or(wasm_v128_and(b, wasm_i8x16_splat(char(0x80))),
                           wasm_v128_and(wasm_u8x16_shr(b, 4), wasm_i8x16_splat(7)));
  hi = wasm_v128_bitselect(wasm_v128_or(b, wasm_i8x16_splat(0x7F)), hi, nan);
  lo = wasm_v128_or(lo, wasm_v128_and(nan, wasm_i8x16_splat(char(0xC0))));
  storeUpperHalves(lo, hi, dst, p, q);
}

// 16 FP4 E2M1 codes (0-15, one a byte): float bits (n & 7) << 22 with the sign of bit 3, times p
// then q.
inline void fp4x16(v128_t n, float* dst, v128_t p, v128_t q) {
  v128_t lo = wasm_i8x16_shl(n, 6);
  v128_t hi = wasm_v128_or(wasm_i8x16_shl(wasm_v128_and(n, wasm_i8x16_splat(8)), 4),
                           wasm_v128_and(wasm_u8x16_shr(n, 2), wasm_i8x16_splat(1)));
  storeUpperHalves(lo, hi, dst, p, q);
}

// 8 packed bytes (low nibble first) in lanes 0-7 to 16 codes in element order.
inline v128_t nibbles8(v128_t b) {
  v128_t lo = wasm_v128_and(b, wasm_i8x16_splat(15));
  v128_t hi = wasm_u8x16_shr(b, 4);
  return wasm_i8x16_shuffle(lo, hi, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
}

}  // namespace st::quant
#endif
