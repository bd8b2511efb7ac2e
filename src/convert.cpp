#include "convert.hpp"

#include <array>
#include <cstddef>
#include <cstring>

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

// All three cases are computed and one is selected, with no branch, so loops vectorize.
inline uint32_t f16ToF32Bits(uint32_t h) {
  const uint32_t sign = (h & 0x8000u) << 16;
  const uint32_t em = h & 0x7FFFu;                            // exponent and mantissa
  const uint32_t normal = (em << 13) + ((127u - 15u) << 23);  // rebias the exponent
  const uint32_t special = (em << 13) | 0x7F800000u;          // infinity / NaN, payload kept
  // A subnormal is em x 2^-24 = (2^-14 + em x 2^-24) - 2^-14: put em under the exponent of
  // 2^-14 and subtract it, exactly. (Unlike int-to-float, this vectorizes in wasm SIMD.)
  const uint32_t subnormal = floatBits(bitsFloat(normal + (1u << 23)) - 0x1p-14f);
  return sign | (em < 0x0400u ? subnormal : em >= 0x7C00u ? special : normal);
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

constexpr auto kE4M3 = minifloatTable<256>({4, 3, 7, NanRule::AllOnes});
constexpr auto kE4M3Fnuz = minifloatTable<256>({4, 3, 8, NanRule::NegativeZero});
constexpr auto kE5M2Fnuz = minifloatTable<256>({5, 2, 16, NanRule::NegativeZero});
constexpr auto kE2M1 = minifloatTable<16>({2, 1, 1, NanRule::None});

// One element of Bytes bytes at a time; `decode` maps its address to a float. Kept trivially
// simple so the compiler inlines `decode` and vectorizes where the target allows.
template <size_t Bytes, class Decode>
inline void decodeEach(const uint8_t* src, size_t n, float* dst, Decode decode) {
  for (size_t i = 0; i < n; ++i) dst[i] = decode(src + i * Bytes);
}

void decodeF4(const uint8_t* src, size_t n, float* dst) {
  const size_t pairs = n / 2;
  for (size_t i = 0; i < pairs; ++i) {
    dst[2 * i] = bitsFloat(kE2M1[src[i] & 0x0Fu]);
    dst[2 * i + 1] = bitsFloat(kE2M1[src[i] >> 4]);
  }
  if (n % 2 != 0) dst[n - 1] = bitsFloat(kE2M1[src[pairs] & 0x0Fu]);
}

void decodeF16(const uint8_t* src, size_t n, float* dst) {
  decodeEach<2>(src, n, dst,
                [](const uint8_t* p) { return bitsFloat(f16ToF32Bits(load<uint16_t>(p))); });
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
    case Dtype::F4:
      decodeF4(src, n, dst);
      break;
    case Dtype::U8:
      decodeCast<uint8_t>(src, n, dst);
      break;
    case Dtype::I8:
      decodeCast<int8_t>(src, n, dst);
      break;
    case Dtype::F8_E5M2:
      // E5M2 is the top byte of an F16.
      decodeEach<1>(src, n, dst, [](const uint8_t* p) {
        return bitsFloat(f16ToF32Bits(static_cast<uint32_t>(*p) << 8));
      });
      break;
    case Dtype::F8_E4M3:
      decodeTable(src, n, dst, kE4M3);
      break;
    case Dtype::F8_E8M0:
      decodeEach<1>(src, n, dst, [](const uint8_t* p) { return bitsFloat(e8m0ToF32Bits(*p)); });
      break;
    case Dtype::F8_E4M3FNUZ:
      decodeTable(src, n, dst, kE4M3Fnuz);
      break;
    case Dtype::F8_E5M2FNUZ:
      decodeTable(src, n, dst, kE5M2Fnuz);
      break;
    case Dtype::I16:
      decodeCast<int16_t>(src, n, dst);
      break;
    case Dtype::U16:
      decodeCast<uint16_t>(src, n, dst);
      break;
    case Dtype::F16:
      decodeF16(src, n, dst);
      break;
    case Dtype::BF16:
      decodeBf16(src, n, dst);
      break;
    case Dtype::I32:
      decodeCast<int32_t>(src, n, dst);
      break;
    case Dtype::U32:
      decodeCast<uint32_t>(src, n, dst);
      break;
    case Dtype::F32:
      std::memcpy(dst, src, n * 4);
      break;
    case Dtype::C64:
      std::memcpy(dst, src, n * 8);
      break;
    case Dtype::F64:
      decodeCast<double>(src, n, dst);
      break;
    case Dtype::I64:
      decodeCast<int64_t>(src, n, dst);
      break;
    case Dtype::U64:
      decodeCast<uint64_t>(src, n, dst);
      break;
    case Dtype::F6_E2M3:
    case Dtype::F6_E3M2:
      return false;
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
