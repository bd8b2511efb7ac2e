// Decoding every safetensors dtype to float32, and casting float32 to BF16 / F16 for the writer.
//
// Safe on any bytes: every bit pattern of every dtype decodes to a defined float (NaN,
// infinities, subnormals and signed zeros included); nothing reads or writes outside the
// buffers described by the arguments. No allocation, no exceptions, no I/O. Source data is
// little-endian (docs/format.md, "Dtypes") and may sit at any alignment; destination arrays
// need only their natural alignment. Callers own all buffers.
#pragma once
#include <cstdint>

#include "dtype.hpp"

namespace st {

// False only for F6_E2M3 and F6_E3M2, exposed as raw packed bytes (docs/format.md, "Dtypes").
bool hasFloat32Form(Dtype dtype);

// Floats that toFloat32 writes for `elements` elements: 2 x elements for C64 (real, imaginary
// interleaved), 0 for the F6 types, else `elements`.
uint64_t float32Count(Dtype dtype, uint64_t elements);

// Decodes `elements` elements of `dtype` at `src` into float32Count(dtype, elements) floats at
// `dst`. Reads exactly the tensor's bytes: elements x bits / 8, rounded up for F4 (two per byte,
// element 0 in the low nibble; an odd count uses the low nibble of the last byte only).
//   BOOL: 0 -> 0, any other byte -> 1.   Integers: the nearest float (ties to even).
//   F64: rounded to nearest even, overflow to infinity.   F32, C64: copied bit for bit.
//   F16, BF16, F8_E5M2: exact, NaN payloads kept (shifted into the float's mantissa).
//   F8_E4M3 (fn), F8_E4M3FNUZ, F8_E5M2FNUZ, F8_E8M0, F4 (E2M1): exact; their NaNs become a
//   quiet NaN (with the sign for F8_E4M3, positive for the unsigned-NaN formats).
// Returns false, writing nothing, for the F6 types or when `elements` is too large to describe
// an in-memory buffer (over SIZE_MAX / 8).
bool toFloat32(Dtype dtype, const uint8_t* src, uint64_t elements, float* dst);

// The exact F16 / BF16 decoders toFloat32 uses, over native uint16_t arrays.
void f16ToFloat32(const uint16_t* src, uint64_t n, float* dst);
void bf16ToFloat32(const uint16_t* src, uint64_t n, float* dst);

// Casts for the writer, round to nearest, ties to even; overflow gives infinity of the same
// sign, F16 subnormals are rounded correctly, and a NaN stays a NaN of the same sign with the
// top bits of its payload and the quiet bit set (so a signalling NaN never becomes infinity).
// `src` and `dst` hold `n` elements and must not overlap.
void float32ToBf16(const float* src, uint64_t n, uint16_t* dst);
void float32ToF16(const float* src, uint64_t n, uint16_t* dst);

}  // namespace st
