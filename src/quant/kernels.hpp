// The dequantization kernels of issue 15 (docs/quantized.md): plain functions over heap
// addresses, built into a wasm module of their own (dist/safetensors_quant*.mjs) that imports
// the core's memory, and called through js/quant/kernels.js. The caller has validated every
// argument: the kernels trust them, never allocate, never throw, and keep no state (no static
// data, no globals, no shadow stack: instantiating the module writes nothing to the core's
// memory; .ci/check-quant-wasm.sh fails the build otherwise). All arithmetic is float32 in the
// order the spec gives, without FMA contraction (-ffp-contract=off).
#pragma once

#include <stdint.h>

// Scale element types (js/quant/kernels.js maps the dtype names to these).
enum : uint32_t { kScaleF32 = 0, kScaleF16 = 1, kScaleBF16 = 2, kScaleE4M3 = 3 };

#if defined(__wasm__)
#define ST_QUANT_EXPORT(name) __attribute__((export_name(#name)))
#else
#define ST_QUANT_EXPORT(name)
#endif

extern "C" {

// out[r*cols+c] = e4m3(w[r*cols+c]) * scale(row block of firstRow+r relative to firstRow's,
// c / blockCols); scales points at the scale row of firstRow's block (scaleCols per row).
ST_QUANT_EXPORT(fp8Block)
void st_quant_fp8_block(const uint8_t* w, const void* scales, uint32_t scaleDtype, float* out,
                        uint32_t rows, uint32_t cols, uint32_t firstRow, uint32_t blockRows,
                        uint32_t blockCols, uint32_t scaleCols);

// As fp8Block, for int8: out = float(w - zeroPoint) * scale, a zero point (int8, 0 when
// zeroPoints is null) per scale, at the same index.
ST_QUANT_EXPORT(int8Block)
void st_quant_int8_block(const int8_t* w, const void* scales, uint32_t scaleDtype,
                         const int8_t* zeroPoints, float* out, uint32_t rows, uint32_t cols,
                         uint32_t firstRow, uint32_t blockRows, uint32_t blockCols,
                         uint32_t scaleCols);

// Per group g: 16 bytes -> 32 values (low nibble first), times 2^(scales[g] - 127) (ldexp).
ST_QUANT_EXPORT(mxfp4)
void st_quant_mxfp4(const uint8_t* blocks, const uint8_t* scales, float* out, uint32_t groups);

// rows x cols FP4 (cols/2 bytes a row, low nibble first) times an E4M3 scale per `group`
// columns, divided (flags & kNvDivide: compressed-tensors) or multiplied (ModelOpt) by
// globalScale first; flags & kNvPositiveZero: code 8 is +0 (ModelOpt's table), not -0.
enum : uint32_t { kNvDivide = 1, kNvPositiveZero = 2 };
ST_QUANT_EXPORT(nvfp4)
void st_quant_nvfp4(const uint8_t* packed, const uint8_t* scales, float* out, uint32_t rows,
                    uint32_t cols, uint32_t group, uint32_t scaleCols, float globalScale,
                    uint32_t flags);

// GPTQ, bits 2..8: fills columns firstIn..firstIn+inCount of rows firstOut..firstOut+outCount
// of out [outCount, inFeatures]. gIdx 0: g = i / group (group is read only then).
ST_QUANT_EXPORT(gptq)
void st_quant_gptq(const uint32_t* qweight, const uint32_t* qzeros, const void* scales,
                   uint32_t scaleDtype, const int32_t* gIdx, float* out, uint32_t inFeatures,
                   uint32_t outFeatures, uint32_t firstIn, uint32_t inCount, uint32_t firstOut,
                   uint32_t outCount, uint32_t bits, uint32_t zeroOffset, uint32_t group);

// AWQ GEMM, 4 bits, nibble order [0,4,1,5,2,6,3,7]; same output convention as gptq.
ST_QUANT_EXPORT(awq)
void st_quant_awq(const uint32_t* qweight, const uint32_t* qzeros, const void* scales,
                  uint32_t scaleDtype, float* out, uint32_t inFeatures, uint32_t outFeatures,
                  uint32_t firstIn, uint32_t inCount, uint32_t firstOut, uint32_t outCount,
                  uint32_t group);

// bitsandbytes double quantisation: the F32 absmax of blocks firstBlock..firstBlock+count.
ST_QUANT_EXPORT(nf4Absmax)
void st_quant_nf4_absmax(const uint8_t* absmax, const float* nestedMap, const float* nestedAbsmax,
                         float offset, float* out, uint32_t firstBlock, uint32_t count,
                         uint32_t nestedBlock);

// bitsandbytes NF4/FP4: elements first..first+count, high nibble first.
ST_QUANT_EXPORT(nf4)
void st_quant_nf4(const uint8_t* packed, const float* absmax, const float* quantMap, float* out,
                  uint32_t first, uint32_t count, uint32_t blocksize);

// compressed-tensors pack-quantized, bits 1..8 (4 and 8 in practice); zeroPoints may be 0.
ST_QUANT_EXPORT(ctPack)
void st_quant_ct_pack(const uint32_t* packed, const void* scales, uint32_t scaleDtype,
                      const uint32_t* zeroPoints, float* out, uint32_t rows, uint32_t firstRow,
                      uint32_t inFeatures, uint32_t bits, uint32_t group, uint32_t groups,
                      uint32_t outFeatures);

// Not a dequantization kernel, but loaded lazily like them (src/quant/sha256.cpp): SHA-256's
// compression of `blocks` 64-byte blocks at data into the eight words of state.
ST_QUANT_EXPORT(sha256Blocks)
void st_sha256_blocks(uint32_t* state, const uint8_t* data, uint32_t blocks);

}  // extern "C"
