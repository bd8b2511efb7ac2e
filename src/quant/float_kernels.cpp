// The float-scaled kernels, where SIMD pays: fp8Block, mxfp4, nvfp4. Each has a scalar path (the
// native build, the no-SIMD module, and the tails); both give the same bits.
#include "fp4_fp8.hpp"
#include "kernels.hpp"
#include "simd.hpp"

using namespace st::quant;

namespace {

// n E4M3 bytes times s.
void fp8Run(const uint8_t* src, float* dst, uint32_t n, float s) {
  uint32_t i = 0;
#ifdef __wasm_simd128__
  const v128_t p = wasm_f32x4_splat(e4m3Bias());
  const v128_t q = wasm_f32x4_splat(s);
  for (; i + 16 <= n; i += 16) e4m3x16(wasm_v128_load(src + i), dst + i, p, q);
#endif
  for (; i < n; i++) dst[i] = e4m3(src[i]) * s;
}

// n FP4 codes from packed bytes (low nibble first; n even) times p then q.
void fp4Run(const uint8_t* src, float* dst, uint32_t n, float p, float q) {
  uint32_t i = 0;
#ifdef __wasm_simd128__
  const v128_t vp = wasm_f32x4_splat(p);
  const v128_t vq = wasm_f32x4_splat(q);
  for (; i + 32 <= n; i += 32) {
    v128_t b = wasm_v128_load(src + i / 2);
    v128_t lo = wasm_v128_and(b, wasm_i8x16_splat(15));
    v128_t hi = wasm_u8x16_shr(b, 4);
    fp4x16(wasm_i8x16_shuffle(lo, hi, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23),
           dst + i, vp, vq);
    fp4x16(wasm_i8x16_shuffle(lo, hi, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31),
           dst + i + 16, vp, vq);
  }
  for (; i + 16 <= n; i += 16)
    fp4x16(nibbles8(wasm_v128_load64_zero(src + i / 2)), dst + i, vp, vq);
#endif
  for (; i + 2 <= n; i += 2) {
    uint32_t b = src[i / 2];
    dst[i] = fp4Raw(b & 15) * p * q;
    dst[i + 1] = fp4Raw(b >> 4) * p * q;
  }
}

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

void st_quant_mxfp4(const uint8_t* blocks, const uint8_t* scales, float* out, uint32_t groups) {
  for (uint32_t g = 0; g < groups; g++) {
    // fp4 * 2^(s - 127) = raw * 2^(s - 1), raw = fp4 * 2^-126, in two exact steps: 2^(s - 1) is
    // out of float range at s = 255 (ldexp semantics: 6 * 2^128 overflows, 0.5 * 2^128 not).
    const int32_t e = int32_t(scales[g]) - 1;
    const float p = pow2(e <= 127 ? e : 127);
    const float q = pow2(e <= 127 ? 0 : e - 127);
    fp4Run(blocks + uint64_t(g) * 16, out + uint64_t(g) * 32, 32, p, q);
  }
}

void st_quant_nvfp4(const uint8_t* packed, const uint8_t* scales, float* out, uint32_t rows,
                    uint32_t cols, uint32_t group, uint32_t scaleCols, float globalScale,
                    uint32_t divide) {
  const uint32_t rowBytes = (cols + 1) / 2;
  const float p = fp4Bias();
  for (uint32_t r = 0; r < rows; r++) {
    const uint8_t* src = packed + uint64_t(r) * rowBytes;
    const uint8_t* rowScales = scales + uint64_t(r) * scaleCols;
    float* dst = out + uint64_t(r) * cols;
    uint32_t g = 0;
    for (uint32_t c = 0; c < cols; c += group, g++) {
      const float s = e4m3(rowScales[g]);
      const float eff = divide ? s / globalScale : s * globalScale;
      const uint32_t n = cols - c < group ? cols - c : group;
      if (c % 2 == 0 && n % 2 == 0) {
        fp4Run(src + c / 2, dst + c, n, p, eff);
        continue;
      }
      for (uint32_t i = c; i < c + n; i++) {
        const uint32_t b = src[i / 2];
        dst[i] = fp4Raw(i % 2 ? b >> 4 : b & 15) * p * eff;
      }
    }
  }
}

}  // extern "C"
