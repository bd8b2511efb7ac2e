#include "convert.hpp"

#include <array>
#include <cstddef>
#include <cstring>

#if defined(__wasm_simd128__)
#include <wasm_simd128.h>
#endif

// Multi-byte elements are read with plain (memcpy) loads, which are little-endian only here.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "the decoders assume a little-endian host");

namespace st {
namespace {

constexpr uint32_t kQuietNan = 0x7FC00000u;

inline uint32_t floatBits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

inline float bitsFloat(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

// Safetensors data has no alignment guarantee; memcpy compiles to a plain load.
template <class T>
inline T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// Scaling the F16's exponent and mantissa, put where a float32 has them, by 2^112 rebiases the
// exponent of a normal and, as subnormal float arithmetic is exact (wasm has no flush to zero),
// normalizes a subnormal too; infinities and NaNs land at 2^16 and above, where the exponent is
// set to all ones, keeping the payload. No branch, so loops vectorize.
inline uint32_t f16ToF32Bits(uint32_t h) {
  const uint32_t sign = (h & 0x8000u) << 16;
  const float scaled = bitsFloat((h & 0x7FFFu) << 13) * 0x1p112f;
  return sign | floatBits(scaled) | (scaled >= 65536.0f ? 0x7F800000u : 0u);
}

inline uint32_t f32ToF16Bits(uint32_t x) {
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t a = x & 0x7FFFFFFFu;
  const uint32_t nan = 0x7E00u | ((a >> 13) & 0x03FFu);  // quiet bit set, top payload bits kept
  // F16-normal range: rebias and round the 13 dropped bits to nearest even. A carry into the
  // exponent is the right answer; anything at or past the rounding threshold of 65520 (and
  // infinity itself) lands at or beyond 0x7C00 and is clamped to infinity.
  uint32_t normal = (a - ((127u - 15u) << 23) + 0x0FFFu + ((a >> 13) & 1u)) >> 13;
  normal = normal < 0x7C00u ? normal : 0x7C00u;
  // Below 2^-14, adding 0.5f gives a float whose ulp is 2^-24, the F16 subnormal step: the
  // FPU's own ties-to-even rounding leaves the F16 bits (up to 0x0400, the smallest normal) in
  // the low mantissa bits.
  const uint32_t subnormal = floatBits(bitsFloat(a) + 0.5f) - 0x3F000000u;
  return sign | (a > 0x7F800000u ? nan : a >= 0x38800000u ? normal : subnormal);
}

inline uint32_t f32ToBf16Bits(uint32_t x) {
  // Ties to even on the low 16 bits; the largest finite values carry into infinity as IEEE says.
  const uint32_t rounded = (x + 0x7FFFu + ((x >> 16) & 1u)) >> 16;
  const uint32_t nan = (x >> 16) | 0x0040u;
  return (x & 0x7FFFFFFFu) > 0x7F800000u ? nan : rounded;
}

// F8_E4M3 (fn) without a table, so that the loop vectorizes: its exponent and mantissa fields,
// put where an F16 has them (E5M10, the low 7 mantissa bits zero), make an F16 whose value is the
// E4M3 value times 2^-8 (the biases are 15 and 7), subnormals included; the product by 2^8 is
// exact. S.1111.111 is NaN.
inline uint32_t e4m3ToF32Bits(uint32_t b) {
  const uint32_t sign = (b & 0x80u) << 24;
  const uint32_t em = b & 0x7Fu;
  const uint32_t magnitude = floatBits(bitsFloat(f16ToF32Bits(em << 7)) * 256.0f);
  return sign | (em == 0x7Fu ? kQuietNan : magnitude);
}

// 2^(e-127): biased exponents match float32's except 0 (2^-127, a float32 subnormal) and 0xFF.
inline uint32_t e8m0ToF32Bits(uint32_t e) {
  const uint32_t value = e == 0 ? 0x00400000u : e << 23;
  return e == 0xFFu ? kQuietNan : value;
}

// The small formats without a cheap bit formula are decoded through 256- (or 16-) entry tables
// of float32 bit patterns, built at compile time from the format's parameters.
enum class NanRule : uint8_t {
  None,          // F4 (E2M1): every code is a number
  AllOnes,       // "fn": S.1111.111 is NaN, no infinities
  NegativeZero,  // "fnuz": 0x80 is the only NaN, no infinities, no -0
};

struct Minifloat {
  int expBits;
  int manBits;
  int bias;
  NanRule nan;
};

constexpr uint32_t minifloatToF32Bits(uint32_t code, Minifloat f) {
  const uint32_t signMask = 1u << (f.expBits + f.manBits);
  const uint32_t expMask = (1u << f.expBits) - 1u;
  const uint32_t manMask = (1u << f.manBits) - 1u;
  const uint32_t sign = (code & signMask) != 0 ? 0x80000000u : 0u;
  const int e = static_cast<int>((code >> f.manBits) & expMask);
  const uint32_t m = code & manMask;
  if (f.nan == NanRule::NegativeZero && code == signMask) return kQuietNan;
  if (f.nan == NanRule::AllOnes && static_cast<uint32_t>(e) == expMask && m == manMask) {
    return sign | kQuietNan;
  }
  if (e == 0 && m == 0) return sign;
  if (e != 0) {
    return sign | static_cast<uint32_t>(e - f.bias + 127) << 23 | m << (23 - f.manBits);
  }
  // Subnormal m x 2^(1 - bias - manBits): normalise on m's highest set bit. Every subnormal of
  // these formats is a normal float32.
  int top = f.manBits - 1;
  while ((m >> top) == 0) --top;
  return sign | static_cast<uint32_t>(top + 1 - f.bias - f.manBits + 127) << 23 |
         (m - (1u << top)) << (23 - top);
}

template <size_t N>
constexpr std::array<uint32_t, N> minifloatTable(Minifloat f) {
  std::array<uint32_t, N> table{};
  for (uint32_t code = 0; code < N; ++code) table[code] = minifloatToF32Bits(code, f);
  return table;
}

constexpr auto kE4M3Fnuz = minifloatTable<256>({4, 3, 8, NanRule::NegativeZero});
constexpr auto kE5M2Fnuz = minifloatTable<256>({5, 2, 16, NanRule::NegativeZero});
constexpr auto kE2M1 = minifloatTable<16>({2, 1, 1, NanRule::None});

// One element of Bytes bytes at a time; `decode` maps its address to a float. Kept trivially
// simple so the compiler inlines `decode` and vectorizes where the target allows.
template <size_t Bytes, class Decode>
inline void decodeEach(const uint8_t* src, size_t n, float* dst, Decode decode) {
#if defined(__clang__)  // g++ (native tests) has no such pragma
#pragma clang loop interleave(disable) unroll(disable)
#endif
  for (size_t i = 0; i < n; ++i) dst[i] = decode(src + i * Bytes);
}

#if defined(__wasm_simd128__)
// Byte `shift / 8` of every E2M1 value's float32 bits, as a 16-entry table for i8x16.swizzle.
constexpr std::array<uint8_t, 16> e2m1Byte(int shift) {
  std::array<uint8_t, 16> t{};
  for (size_t i = 0; i < 16; ++i) t[i] = static_cast<uint8_t>(kE2M1[i] >> shift);
  return t;
}

constexpr bool e2m1LowHalvesZero() {
  for (uint32_t bits : kE2M1)
    if (bits & 0xFFFFu) return false;
  return true;
}
static_assert(e2m1LowHalvesZero(), "E2M1 values are made of their floats' top two bytes");
#endif

void decodeF4(const uint8_t* src, size_t n, float* dst) {
  const size_t pairs = n / 2;
  size_t i = 0;
#if defined(__wasm_simd128__)
  // 16 bytes (32 values) at a time: wasm has no gather, but i8x16.swizzle is a 16-entry byte
  // table lookup, and an E2M1 value's float32 is two table bytes over two zero bytes.
  static constexpr std::array<uint8_t, 16> kByte3 = e2m1Byte(24), kByte2 = e2m1Byte(16);
  const v128_t byte3 = wasm_v128_load(kByte3.data()), byte2 = wasm_v128_load(kByte2.data());
  const v128_t zero = wasm_i32x4_splat(0);
  for (; i + 16 <= pairs; i += 16) {
    const v128_t bytes = wasm_v128_load(src + i);
    const v128_t low = wasm_v128_and(bytes, wasm_i8x16_splat(0x0F));
    const v128_t high = wasm_u8x16_shr(bytes, 4);
    // Element 2k is byte k's low nibble, element 2k + 1 its high one.
    const v128_t codes[2] = {
        wasm_i8x16_shuffle(low, high, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23),
        wasm_i8x16_shuffle(low, high, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15,
                           31)};
    float* out = dst + 2 * i;
    for (const v128_t c : codes) {
      const v128_t b3 = wasm_i8x16_swizzle(byte3, c), b2 = wasm_i8x16_swizzle(byte2, c);
      // (byte 2, byte 3) pairs of 8 values, then each pair under two zero bytes.
      const v128_t pairs03 =
          wasm_i8x16_shuffle(b2, b3, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
      const v128_t pairs47 =
          wasm_i8x16_shuffle(b2, b3, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
      wasm_v128_store(out, wasm_i8x16_shuffle(zero, pairs03, 0, 0, 16, 17, 0, 0, 18, 19, 0, 0, 20,
                                              21, 0, 0, 22, 23));
      wasm_v128_store(out + 4, wasm_i8x16_shuffle(zero, pairs03, 0, 0, 24, 25, 0, 0, 26, 27, 0, 0,
                                                  28, 29, 0, 0, 30, 31));
      wasm_v128_store(out + 8, wasm_i8x16_shuffle(zero, pairs47, 0, 0, 16, 17, 0, 0, 18, 19, 0, 0,
                                                  20, 21, 0, 0, 22, 23));
      wasm_v128_store(out + 12, wasm_i8x16_shuffle(zero, pairs47, 0, 0, 24, 25, 0, 0, 26, 27, 0, 0,
                                                   28, 29, 0, 0, 30, 31));
      out += 16;
    }
  }
#endif
  for (; i < pairs; ++i) {
    dst[2 * i] = bitsFloat(kE2M1[src[i] & 0x0Fu]);
    dst[2 * i + 1] = bitsFloat(kE2M1[src[i] >> 4]);
  }
  if (n % 2 != 0) dst[n - 1] = bitsFloat(kE2M1[src[pairs] & 0x0Fu]);
}

#if defined(__wasm_simd128__)
// f16ToF32Bits on four lanes, the F16s in the top half of each 32-bit lane. Written out rather
// than left to the vectorizer, which narrows the comparisons to 16-bit lanes and widens every
// mask back.
inline v128_t f16HighToF32x4(v128_t high) {
  const v128_t sign = wasm_v128_and(high, wasm_i32x4_splat(static_cast<int32_t>(0x80000000u)));
  const v128_t shifted = wasm_u32x4_shr(wasm_i32x4_shl(high, 1), 4);  // exponent and mantissa << 13
  const v128_t scaled = wasm_f32x4_mul(shifted, wasm_f32x4_splat(0x1p112f));
  const v128_t isSpecial = wasm_f32x4_ge(scaled, wasm_f32x4_splat(65536.0f));
  return wasm_v128_or(wasm_v128_or(scaled, sign),
                      wasm_v128_and(isSpecial, wasm_i32x4_splat(0x7F800000)));
}

inline v128_t f16ToF32x4(v128_t h) { return f16HighToF32x4(wasm_i32x4_shl(h, 16)); }

// e4m3ToF32Bits on four lanes of E4M3 bytes (one per 32-bit lane).
inline v128_t e4m3ToF32x4(v128_t b) {
  const v128_t sign = wasm_i32x4_shl(wasm_u32x4_shr(b, 7), 31);
  const v128_t em = wasm_v128_and(b, wasm_i32x4_splat(0x7F));
  const v128_t magnitude =
      wasm_f32x4_mul(f16ToF32x4(wasm_i32x4_shl(em, 7)), wasm_f32x4_splat(256.0f));
  const v128_t nan = wasm_i32x4_eq(em, wasm_i32x4_splat(0x7F));
  return wasm_v128_or(
      sign, wasm_v128_bitselect(wasm_i32x4_splat(static_cast<int32_t>(kQuietNan)), magnitude, nan));
}

// Widens 16 bytes (8-bit codes) to four vectors of 32-bit lanes and stores decode() of each.
template <class Decode>
inline void decodeBytesX16(const uint8_t* src, float* dst, Decode decode) {
  const v128_t bytes = wasm_v128_load(src);
  const v128_t lo = wasm_u16x8_extend_low_u8x16(bytes), hi = wasm_u16x8_extend_high_u8x16(bytes);
  wasm_v128_store(dst, decode(wasm_u32x4_extend_low_u16x8(lo)));
  wasm_v128_store(dst + 4, decode(wasm_u32x4_extend_high_u16x8(lo)));
  wasm_v128_store(dst + 8, decode(wasm_u32x4_extend_low_u16x8(hi)));
  wasm_v128_store(dst + 12, decode(wasm_u32x4_extend_high_u16x8(hi)));
}
#endif

void decodeF16(const uint8_t* src, size_t n, float* dst) {
  size_t i = 0;
#if defined(__wasm_simd128__)
  for (; i + 8 <= n; i += 8) {
    // Interleaving with zeros puts each F16 in the top half of a 32-bit lane in one shuffle.
    const v128_t h = wasm_v128_load(src + 2 * i), zero = wasm_i32x4_splat(0);
    wasm_v128_store(dst + i, f16HighToF32x4(wasm_i16x8_shuffle(zero, h, 0, 8, 1, 9, 2, 10, 3, 11)));
    wasm_v128_store(dst + i + 4,
                    f16HighToF32x4(wasm_i16x8_shuffle(zero, h, 4, 12, 5, 13, 6, 14, 7, 15)));
  }
#endif
  decodeEach<2>(src + 2 * i, n - i, dst + i,
                [](const uint8_t* p) { return bitsFloat(f16ToF32Bits(load<uint16_t>(p))); });
}

void decodeE5M2(const uint8_t* src, size_t n, float* dst) {
  size_t i = 0;
#if defined(__wasm_simd128__)
  for (; i + 16 <= n; i += 16)
    decodeBytesX16(src + i, dst + i, [](v128_t b) { return f16ToF32x4(wasm_i32x4_shl(b, 8)); });
#endif
  // E5M2 is the top byte of an F16.
  decodeEach<1>(src + i, n - i, dst + i, [](const uint8_t* p) {
    return bitsFloat(f16ToF32Bits(static_cast<uint32_t>(*p) << 8));
  });
}

void decodeE4M3(const uint8_t* src, size_t n, float* dst) {
  size_t i = 0;
#if defined(__wasm_simd128__)
  for (; i + 16 <= n; i += 16) decodeBytesX16(src + i, dst + i, e4m3ToF32x4);
#endif
  decodeEach<1>(src + i, n - i, dst + i,
                [](const uint8_t* p) { return bitsFloat(e4m3ToF32Bits(*p)); });
}

void decodeBf16(const uint8_t* src, size_t n, float* dst) {
  decodeEach<2>(src, n, dst, [](const uint8_t* p) {
    return bitsFloat(static_cast<uint32_t>(load<uint16_t>(p)) << 16);
  });
}

template <class T>
void decodeCast(const uint8_t* src, size_t n, float* dst) {
  decodeEach<sizeof(T)>(src, n, dst,
                        [](const uint8_t* p) { return static_cast<float>(load<T>(p)); });
}

void decodeTable(const uint8_t* src, size_t n, float* dst, const std::array<uint32_t, 256>& t) {
  decodeEach<1>(src, n, dst, [&t](const uint8_t* p) { return bitsFloat(t[*p]); });
}

}  // namespace

bool hasFloat32Form(Dtype dtype) { return dtype != Dtype::F6_E2M3 && dtype != Dtype::F6_E3M2; }

uint64_t float32Count(Dtype dtype, uint64_t elements) {
  if (!hasFloat32Form(dtype)) return 0;
  return dtype == Dtype::C64 ? 2 * elements : elements;
}

bool toFloat32(Dtype dtype, const uint8_t* src, uint64_t elements, float* dst) {
  // The widest case moves 8 bytes per element; past this no buffer of that size can exist,
  // and the loops below may use size_t (32 bits in wasm32).
  if (!hasFloat32Form(dtype) || elements > SIZE_MAX / 8) return false;
  if (elements == 0) return true;  // and memcpy never sees the null pointers of empty buffers
  const size_t n = static_cast<size_t>(elements);
  switch (dtype) {
    case Dtype::BOOL:
      decodeEach<1>(src, n, dst, [](const uint8_t* p) { return *p != 0 ? 1.0f : 0.0f; });
      break;
    case Dtype::F4: decodeF4(src, n, dst); break;
    case Dtype::U8: decodeCast<uint8_t>(src, n, dst); break;
    case Dtype::I8: decodeCast<int8_t>(src, n, dst); break;
    case Dtype::F8_E5M2: decodeE5M2(src, n, dst); break;
    case Dtype::F8_E4M3: decodeE4M3(src, n, dst); break;
    case Dtype::F8_E8M0:
      decodeEach<1>(src, n, dst, [](const uint8_t* p) { return bitsFloat(e8m0ToF32Bits(*p)); });
      break;
    case Dtype::F8_E4M3FNUZ: decodeTable(src, n, dst, kE4M3Fnuz); break;
    case Dtype::F8_E5M2FNUZ: decodeTable(src, n, dst, kE5M2Fnuz); break;
    case Dtype::I16: decodeCast<int16_t>(src, n, dst); break;
    case Dtype::U16: decodeCast<uint16_t>(src, n, dst); break;
    case Dtype::F16: decodeF16(src, n, dst); break;
    case Dtype::BF16: decodeBf16(src, n, dst); break;
    case Dtype::I32: decodeCast<int32_t>(src, n, dst); break;
    case Dtype::U32: decodeCast<uint32_t>(src, n, dst); break;
    case Dtype::F32: std::memcpy(dst, src, n * 4); break;
    case Dtype::C64: std::memcpy(dst, src, n * 8); break;
    case Dtype::F64: decodeCast<double>(src, n, dst); break;
    case Dtype::I64: decodeCast<int64_t>(src, n, dst); break;
    case Dtype::U64: decodeCast<uint64_t>(src, n, dst); break;
    case Dtype::F6_E2M3:
    case Dtype::F6_E3M2: return false;
  }
  return true;
}

void f16ToFloat32(const uint16_t* src, uint64_t n, float* dst) {
  decodeF16(reinterpret_cast<const uint8_t*>(src), static_cast<size_t>(n), dst);
}

void bf16ToFloat32(const uint16_t* src, uint64_t n, float* dst) {
  decodeBf16(reinterpret_cast<const uint8_t*>(src), static_cast<size_t>(n), dst);
}

void float32ToBf16(const float* src, uint64_t n, uint16_t* dst) {
  const size_t count = static_cast<size_t>(n);
  for (size_t i = 0; i < count; ++i)
    dst[i] = static_cast<uint16_t>(f32ToBf16Bits(floatBits(src[i])));
}

void float32ToF16(const float* src, uint64_t n, uint16_t* dst) {
  const size_t count = static_cast<size_t>(n);
  for (size_t i = 0; i < count; ++i)
    dst[i] = static_cast<uint16_t>(f32ToF16Bits(floatBits(src[i])));
}

}  // namespace st
