// The float-scaled kernels, where SIMD pays: fp8Block, mxfp4, nvfp4. Each has a scalar path (the
// native build, the no-SIMD module, and the tails); both give the same bits (scaling.hpp).
#include "fp4_fp8.hpp"
#include "kernels.hpp"
#include "scaling.hpp"
#include "simd.hpp"

using namespace st::quant;

namespace {

#ifdef __wasm_simd128__
template <bool kTwo, bool kPlus>
uint32_t fp4Simd(const uint8_t* src, float* dst, uint32_t n, Scaling sc) {
  const v128_t p = wasm_f32x4_splat(sc.p);
  const v128_t q = wasm_f32x4_splat(sc.q);
  const v128_t mask = wasm_i8x16_splat(15);
  uint32_t i = 0;
  for (; i + 32 <= n; i += 32) {
    v128_t b = wasm_v128_load(src + i / 2);
    v128_t lo = wasm_v128_and(b, mask);
    v128_t hi = highNibbles(b);
    v128_t n0 = nibblesLow(lo, hi), n1 = nibblesHigh(lo, hi);
    fp4x16<kTwo, kPlus>(n0, dst + i, p, q);
    fp4x16<kTwo, kPlus>(n1, dst + i + 16, p, q);
  }
  if (i + 16 <= n) {
    v128_t b = wasm_v128_load64_zero(src + i / 2);
    v128_t n0 = nibblesLow(wasm_v128_and(b, mask), highNibbles(b));
    fp4x16<kTwo, kPlus>(n0, dst + i, p, q);
    i += 16;
  }
  return i;
}
#endif

// n E4M3 bytes times s.
void fp8Run(const uint8_t* src, float* dst, uint32_t n, float s) {
  uint32_t i = 0;
#ifdef __wasm_simd128__
  const v128_t sv = wasm_f32x4_splat(s);
  for (; i + 16 <= n; i += 16) e4m3x16Scaled(wasm_v128_load(src + i), dst + i, sv);
#endif
  for (; i < n; i++) dst[i] = e4m3(src[i]) * s;
}

// n int8 values minus zp, times s: (q - zp) is exact in float32, so one rounding.
void int8Run(const int8_t* src, float* dst, uint32_t n, int32_t zp, float s) {
  uint32_t i = 0;
#ifdef __wasm_simd128__
  // q - zp + 256 (1..511) as the low half of a float whose high half is 0x4B00 is 2^23 + 256 +
  // (q - zp) exactly; minus 2^23 + 256, exactly q - zp. (clang turns an int16 to float32
  // conversion written with extends into a lane-by-lane one.)
  const v128_t offset = wasm_i16x8_splat(int16_t(256 - zp));
  const v128_t high = wasm_i16x8_splat(0x4B00);
  const v128_t base = wasm_f32x4_splat(8388608.0f + 256.0f);
  const v128_t sv = wasm_f32x4_splat(s);
  for (; i + 16 <= n; i += 16) {
    const v128_t b = wasm_v128_load(src + i);
    const v128_t lo = wasm_i16x8_add(wasm_i16x8_extend_low_i8x16(b), offset);
    const v128_t hi = wasm_i16x8_add(wasm_i16x8_extend_high_i8x16(b), offset);
    const v128_t f[4] = {wasm_i16x8_shuffle(lo, high, 0, 8, 1, 9, 2, 10, 3, 11),
                         wasm_i16x8_shuffle(lo, high, 4, 12, 5, 13, 6, 14, 7, 15),
                         wasm_i16x8_shuffle(hi, high, 0, 8, 1, 9, 2, 10, 3, 11),
                         wasm_i16x8_shuffle(hi, high, 4, 12, 5, 13, 6, 14, 7, 15)};
    for (int k = 0; k < 4; k++)
      wasm_v128_store(dst + i + 4 * k, wasm_f32x4_mul(wasm_f32x4_sub(f[k], base), sv));
  }
#endif
  for (; i < n; i++) dst[i] = float(int32_t(src[i]) - zp) * s;
}

// Code 8 as 0 when plus (ModelOpt's +0).
inline uint32_t code(uint32_t n, bool plus) { return plus && n == 8 ? 0 : n; }

// n FP4 codes from packed bytes (low nibble first; n even), as fp4 * p * q (p = 1: one multiply).
void fp4Run(const uint8_t* src, float* dst, uint32_t n, Scaling sc, bool plus = false) {
  uint32_t i = 0;
#ifdef __wasm_simd128__
  if (plus) {
    i = sc.p == 1.0f ? fp4Simd<false, true>(src, dst, n, sc) : fp4Simd<true, true>(src, dst, n, sc);
  } else {
    i = sc.p == 1.0f ? fp4Simd<false, false>(src, dst, n, sc)
                     : fp4Simd<true, false>(src, dst, n, sc);
  }
#endif
  for (; i + 2 <= n; i += 2) {
    uint32_t b = src[i / 2];
    dst[i] = fp4(code(b & 15, plus)) * sc.p * sc.q;
    dst[i + 1] = fp4(code(b >> 4, plus)) * sc.p * sc.q;
  }
}

inline float nvEff(uint8_t s, float globalScale, uint32_t flags) {
  return flags & kNvDivide ? e4m3(s) / globalScale : e4m3(s) * globalScale;
}

#ifdef __wasm_simd128__
// nvfp4 rows with groups of 16, four groups (64 values, 4 scales) a step: fp4 * eff, one
// multiply (exact fp4 values, one rounding, as the scalar path); returns the columns done.
template <bool kPlus>
uint32_t nvfp4Row16(const uint8_t* src, const uint8_t* scales, float* dst, uint32_t cols,
                    float globalScale, uint32_t flags) {
  const v128_t g = wasm_f32x4_splat(globalScale);
  const v128_t mask = wasm_i8x16_splat(15);
  uint32_t c = 0;
  for (; c + 64 <= cols; c += 64) {
    v128_t s = e4m3x4(wasm_v128_load32_zero(scales + c / 16));
    v128_t eff = flags & kNvDivide ? wasm_f32x4_div(s, g) : wasm_f32x4_mul(s, g);
    v128_t b0 = wasm_v128_load(src + c / 2);
    v128_t b1 = wasm_v128_load(src + c / 2 + 16);
    v128_t lo0 = wasm_v128_and(b0, mask), hi0 = highNibbles(b0);
    v128_t lo1 = wasm_v128_and(b1, mask), hi1 = highNibbles(b1);
    fp4x16<false, kPlus>(nibblesLow(lo0, hi0), dst + c, eff,
                         wasm_i32x4_shuffle(eff, eff, 0, 0, 0, 0));
    fp4x16<false, kPlus>(nibblesHigh(lo0, hi0), dst + c + 16, eff,
                         wasm_i32x4_shuffle(eff, eff, 1, 1, 1, 1));
    fp4x16<false, kPlus>(nibblesLow(lo1, hi1), dst + c + 32, eff,
                         wasm_i32x4_shuffle(eff, eff, 2, 2, 2, 2));
    fp4x16<false, kPlus>(nibblesHigh(lo1, hi1), dst + c + 48, eff,
                         wasm_i32x4_shuffle(eff, eff, 3, 3, 3, 3));
  }
  return c;
}
#endif

#ifdef __wasm_simd128__
// mxfp4, four groups (128 values, 4 scales) a step: one multiply by 2^(s - 127) while every
// scale of the four is 1-254, else two (mxScaling()). Returns the groups done.
uint32_t mxfp4Simd(const uint8_t* blocks, const uint8_t* scales, float* out, uint32_t groups) {
  const v128_t mask = wasm_i8x16_splat(15);
  uint32_t g = 0;
  for (; g + 4 <= groups; g += 4) {
    v128_t s =
        wasm_u32x4_extend_low_u16x8(wasm_u16x8_extend_low_u8x16(wasm_v128_load32_zero(scales + g)));
    v128_t low = wasm_i32x4_eq(s, wasm_i32x4_splat(0));
    v128_t high = wasm_i32x4_eq(s, wasm_i32x4_splat(255));
    // Exponent bits of q: s itself (2^(s - 127)), 1 at s = 0 (2^-126), 254 at s = 255 (2^127).
    v128_t qe = wasm_v128_bitselect(wasm_i32x4_splat(1), s, low);
    qe = wasm_v128_bitselect(wasm_i32x4_splat(254), qe, high);
    v128_t q = wasm_i32x4_shl(qe, 23);
    v128_t p = wasm_v128_bitselect(wasm_f32x4_splat(0.5f), wasm_f32x4_splat(1.0f), low);
    p = wasm_v128_bitselect(wasm_f32x4_splat(2.0f), p, high);
    const bool two = wasm_v128_any_true(wasm_v128_or(low, high));
    const uint8_t* src = blocks + uint64_t(g) * 16;
    float* dst = out + uint64_t(g) * 32;
    v128_t qs[4] = {wasm_i32x4_shuffle(q, q, 0, 0, 0, 0), wasm_i32x4_shuffle(q, q, 1, 1, 1, 1),
                    wasm_i32x4_shuffle(q, q, 2, 2, 2, 2), wasm_i32x4_shuffle(q, q, 3, 3, 3, 3)};
    v128_t ps[4] = {wasm_i32x4_shuffle(p, p, 0, 0, 0, 0), wasm_i32x4_shuffle(p, p, 1, 1, 1, 1),
                    wasm_i32x4_shuffle(p, p, 2, 2, 2, 2), wasm_i32x4_shuffle(p, p, 3, 3, 3, 3)};
    for (int k = 0; k < 4; k++) {
      v128_t b = wasm_v128_load(src + 16 * k);
      v128_t lo = wasm_v128_and(b, mask), hi = highNibbles(b);
      if (two) {
        fp4x16<true, false>(nibblesLow(lo, hi), dst + 32 * k, ps[k], qs[k]);
        fp4x16<true, false>(nibblesHigh(lo, hi), dst + 32 * k + 16, ps[k], qs[k]);
      } else {
        fp4x16<false, false>(nibblesLow(lo, hi), dst + 32 * k, ps[k], qs[k]);
        fp4x16<false, false>(nibblesHigh(lo, hi), dst + 32 * k + 16, ps[k], qs[k]);
      }
    }
  }
  return g;
}
#endif

}  // namespace

extern "C" {

void st_quant_fp8_block(const uint8_t* w, const void* scales, uint32_t scaleDtype, float* out,
                        uint32_t rows, uint32_t cols, uint32_t firstRow, uint32_t blockRows,
                        uint32_t blockCols, uint32_t scaleCols) {
  const uint32_t firstBlock = firstRow / blockRows;
  for (uint32_t r = 0; r < rows; r++) {
    const uint64_t scaleRow = uint64_t((firstRow + r) / blockRows - firstBlock) * scaleCols;
    const uint8_t* src = w + uint64_t(r) * cols;
    float* dst = out + uint64_t(r) * cols;
    uint32_t cb = 0;
    for (uint32_t c = 0; c < cols; c += blockCols, cb++) {
      const uint32_t n = cols - c < blockCols ? cols - c : blockCols;
      fp8Run(src + c, dst + c, n, scaleAt(scales, scaleDtype, scaleRow + cb));
    }
  }
}

void st_quant_int8_block(const int8_t* w, const void* scales, uint32_t scaleDtype,
                         const int8_t* zeroPoints, float* out, uint32_t rows, uint32_t cols,
                         uint32_t firstRow, uint32_t blockRows, uint32_t blockCols,
                         uint32_t scaleCols) {
  const uint32_t firstBlock = firstRow / blockRows;
  for (uint32_t r = 0; r < rows; r++) {
    const uint64_t scaleRow = uint64_t((firstRow + r) / blockRows - firstBlock) * scaleCols;
    const int8_t* src = w + uint64_t(r) * cols;
    float* dst = out + uint64_t(r) * cols;
    uint32_t cb = 0;
    for (uint32_t c = 0; c < cols; c += blockCols, cb++) {
      const uint32_t n = cols - c < blockCols ? cols - c : blockCols;
      const int32_t zp = zeroPoints ? int32_t(zeroPoints[scaleRow + cb]) : 0;
      int8Run(src + c, dst + c, n, zp, scaleAt(scales, scaleDtype, scaleRow + cb));
    }
  }
}

void st_quant_mxfp4(const uint8_t* blocks, const uint8_t* scales, float* out, uint32_t groups) {
  for (uint32_t g = 0; g < groups; g++) {
#ifdef __wasm_simd128__
    g += mxfp4Simd(blocks + uint64_t(g) * 16, scales + g, out + uint64_t(g) * 32, groups - g);
    if (g == groups) break;
#endif
    // fp4 * 2^(s - 127), ldexp semantics (at s = 255, 0.5 * 2^128 = 2^127): mxScaling().
    fp4Run(blocks + uint64_t(g) * 16, out + uint64_t(g) * 32, 32, mxScaling(scales[g]));
  }
}

void st_quant_nvfp4(const uint8_t* packed, const uint8_t* scales, float* out, uint32_t rows,
                    uint32_t cols, uint32_t group, uint32_t scaleCols, float globalScale,
                    uint32_t flags) {
  const uint32_t rowBytes = (cols + 1) / 2;
  const bool plus = flags & kNvPositiveZero;
  for (uint32_t r = 0; r < rows; r++) {
    const uint8_t* src = packed + uint64_t(r) * rowBytes;
    const uint8_t* rowScales = scales + uint64_t(r) * scaleCols;
    float* dst = out + uint64_t(r) * cols;
    uint32_t c = 0;
#ifdef __wasm_simd128__
    if (group == 16) {
      c = plus ? nvfp4Row16<true>(src, rowScales, dst, cols, globalScale, flags)
               : nvfp4Row16<false>(src, rowScales, dst, cols, globalScale, flags);
    }
#endif
    for (; c < cols; c += group) {
      const float eff = nvEff(rowScales[c / group], globalScale, flags);
      const uint32_t n = cols - c < group ? cols - c : group;
      if (c % 2 == 0 && n % 2 == 0) {
        fp4Run(src + c / 2, dst + c, n, Scaling{1.0f, eff}, plus);
        continue;
      }
      for (uint32_t i = c; i < c + n; i++) {
        const uint32_t b = src[i / 2];
        dst[i] = fp4(code(i % 2 ? b >> 4 : b & 15, plus)) * eff;
      }
    }
  }
}

}  // extern "C"
