// Wasm SIMD helpers of the float kernels: 16 small-float codes, one per byte lane, widened to
// 16 float32 bit patterns with the same arithmetic as the scalar decoders in fp4_fp8.hpp, then
// multiplied (one rounding of an exact product; see scaling.hpp for mxfp4's two).
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

// E4M3FN codes, one per 32-bit lane, as float32 values by integer operations (as e4m3()): a
// normal code's exponent rebiased by 120, a subnormal's mantissa m converted and times 2^-9
// (exact), NaN 0x7FF00000; then the sign. No subnormal float reaches a multiply: on x86 each
// one costs a microcode assist, and a quarter of random bytes' vectors hold one.
inline v128_t e4m3Lanes(v128_t u) {
  const v128_t magnitude = wasm_v128_and(u, wasm_i32x4_splat(0x7F));
  const v128_t sign = wasm_i32x4_shl(wasm_v128_and(u, wasm_i32x4_splat(0x80)), 24);
  const v128_t normal = wasm_i32x4_add(wasm_i32x4_shl(magnitude, 20), wasm_i32x4_splat(120 << 23));
  const v128_t sub =
      wasm_f32x4_mul(wasm_f32x4_convert_i32x4(magnitude),
                     wasm_f32x4_splat(__builtin_bit_cast(float, uint32_t(118) << 23)));
  v128_t v = wasm_v128_bitselect(sub, normal, wasm_u32x4_lt(magnitude, wasm_i32x4_splat(8)));
  v = wasm_v128_bitselect(wasm_i32x4_splat(0x7FF00000), v,
                          wasm_i32x4_eq(magnitude, wasm_i32x4_splat(0x7F)));
  return wasm_v128_or(v, sign);
}

// 16 E4M3FN bytes times s (one rounding: the values are exact), stored at dst. The upper
// halves of the values' float32 bits are made byte by byte (as e4m3(): a normal code's exponent
// rebiased by 120, a subnormal's m * 2^-9 from a table of eight, NaN 0x7FF00000 with the sign),
// so no subnormal float reaches a multiply.
inline void e4m3x16Scaled(v128_t b, float* dst, v128_t s) {
  // Byte-wise shifts through 16-bit ones, masked so that no bit crosses into the other byte.
  const v128_t e = wasm_v128_and(wasm_u16x8_shr(b, 3), wasm_i8x16_splat(15));
  const v128_t m = wasm_v128_and(b, wasm_i8x16_splat(7));
  const v128_t sign = wasm_v128_and(b, wasm_i8x16_splat(char(0x80)));
  const v128_t biased = wasm_i8x16_add(e, wasm_i8x16_splat(120));  // 120..135, as bytes
  v128_t hi = wasm_v128_or(sign, wasm_v128_and(wasm_u16x8_shr(biased, 1), wasm_i8x16_splat(0x7F)));
  v128_t lo = wasm_v128_or(wasm_i16x8_shl(wasm_v128_and(biased, wasm_i8x16_splat(1)), 7),
                           wasm_i16x8_shl(m, 4));
  // m * 2^-9, m = 0..7: float32 bits 0x0000, 0x3B00, 0x3B80, 0x3BC0, 0x3C00, 0x3C20, 0x3C40,
  // 0x3C60 (upper halves).
  const v128_t subHi =
      wasm_i8x16_make(0, 0x3B, 0x3B, 0x3B, 0x3C, 0x3C, 0x3C, 0x3C, 0, 0, 0, 0, 0, 0, 0, 0);
  const v128_t subLo =
      wasm_i8x16_make(0, 0, char(0x80), char(0xC0), 0, 0x20, 0x40, 0x60, 0, 0, 0, 0, 0, 0, 0, 0);
  const v128_t sub = wasm_i8x16_eq(e, wasm_i8x16_splat(0));
  hi = wasm_v128_bitselect(wasm_v128_or(sign, wasm_i8x16_swizzle(subHi, m)), hi, sub);
  lo = wasm_v128_bitselect(wasm_i8x16_swizzle(subLo, m), lo, sub);
  const v128_t nan =
      wasm_i8x16_eq(wasm_v128_and(b, wasm_i8x16_splat(0x7F)), wasm_i8x16_splat(0x7F));
  hi = wasm_v128_bitselect(wasm_v128_or(sign, wasm_i8x16_splat(0x7F)), hi, nan);
  lo = wasm_v128_bitselect(wasm_i8x16_splat(char(0xF0)), lo, nan);
  storeUpperHalves<false>(lo, hi, dst, s, s);
}

// 16 FP4 E2M1 codes (0-15, one a byte) as the upper halves of their float32 values' bits, looked
// up in two 16-byte tables (as fp4(): normal floats or zero, so no subnormal reaches a multiply;
// kPlus: code 8 as +0, ModelOpt's table), times p (when kTwo) then q.
template <bool kTwo, bool kPlus>
inline void fp4x16(v128_t n, float* dst, v128_t p, v128_t q) {
  const v128_t hiTable = wasm_i8x16_make(0, 0x3F, 0x3F, 0x3F, 0x40, 0x40, 0x40, 0x40,
                                         kPlus ? 0 : char(0x80), char(0xBF), char(0xBF), char(0xBF),
                                         char(0xC0), char(0xC0), char(0xC0), char(0xC0));
  const v128_t loTable =
      wasm_i8x16_make(0, 0, char(0x80), char(0xC0), 0, 0x40, char(0x80), char(0xC0), 0, 0,
                      char(0x80), char(0xC0), 0, 0x40, char(0x80), char(0xC0));
  storeUpperHalves<kTwo>(wasm_i8x16_swizzle(loTable, n), wasm_i8x16_swizzle(hiTable, n), dst, p, q);
}

// The high nibbles of packed bytes, one a byte.
inline v128_t highNibbles(v128_t b) {
  return wasm_v128_and(wasm_u16x8_shr(b, 4), wasm_i8x16_splat(15));
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
  return e4m3Lanes(wasm_u32x4_extend_low_u16x8(wasm_u16x8_extend_low_u8x16(b)));
}

}  // namespace st::quant
#endif
