// The integer-packed kernels: GPTQ and AWQ (stored [in, out], words packed along in or out) and
// compressed-tensors pack-quantized (stored [out, in]). Scalar: their targets are exactness and
// bounded memory, not bandwidth.
#include "fp4_fp8.hpp"
#include "kernels.hpp"

using namespace st::quant;

namespace {

// `bits` bits at bit position `at` of a little-endian stream of words `stride` words apart.
inline uint32_t bitsAt(const uint32_t* words, uint64_t stride, uint32_t at, uint32_t bits) {
  const uint32_t w = at >> 5;
  const uint32_t shift = at & 31;
  uint32_t v = words[w * stride] >> shift;
  if (shift + bits > 32) v |= words[(w + 1) * stride] << (32 - shift);
  return v & ((1u << bits) - 1);
}

// Inputs decoded per pass over the output rows: 32 of them span `bits` stored rows of qweight.
constexpr uint32_t kInChunk = 64;

struct Gptq {
  const uint32_t* qweight;
  const uint32_t* qzeros;
  const void* scales;
  const int32_t* gIdx;
  float* out;
  uint32_t inFeatures, outFeatures, firstIn, inCount, firstOut, outCount, bits, zeroOffset, group;
};

// kBits: 2, 4 or 8, or 0 for a width read from a.bits.
template <uint32_t D, uint32_t kBits>
void gptqRun(const Gptq& a) {
  const uint32_t bits = kBits ? kBits : a.bits;
  const uint64_t zeroWords = (uint64_t(a.outFeatures) * bits + 31) / 32;
  const uint32_t endIn = a.firstIn + a.inCount;
  for (uint32_t i0 = a.firstIn; i0 < endIn; i0 += kInChunk) {
    const uint32_t i1 = endIn - i0 < kInChunk ? endIn : i0 + kInChunk;
    for (uint32_t o = a.firstOut; o < a.firstOut + a.outCount; o++) {
      float* row = a.out + uint64_t(o - a.firstOut) * a.inFeatures;
      for (uint32_t i = i0; i < i1; i++) {
        const uint32_t g = a.gIdx ? uint32_t(a.gIdx[i]) : i / a.group;
        uint32_t q, z;
        if (kBits) {
          constexpr uint32_t w = kBits ? kBits : 1, mask = (1u << w) - 1, perWord = 32 / w;
          const uint32_t k = i - a.firstIn;
          q = (a.qweight[uint64_t(k / perWord) * a.outFeatures + o] >> (kBits * (k % perWord))) &
              mask;
          z = (a.qzeros[g * zeroWords + o / perWord] >> (w * (o % perWord))) & mask;
        } else {
          q = bitsAt(a.qweight + o, a.outFeatures, (i - a.firstIn) * bits, bits);
          z = bitsAt(a.qzeros + g * zeroWords, 1, o * bits, bits);
        }
        const float s = scaleOf<D>(a.scales, uint64_t(g) * a.outFeatures + o);
        row[i] = s * float(int32_t(q) - (int32_t(z) + int32_t(a.zeroOffset)));
      }
    }
  }
}

}  // namespace

extern "C" {

void st_quant_gptq(const uint32_t* qweight, const uint32_t* qzeros, const void* scales,
                   uint32_t scaleDtype, const int32_t* gIdx, float* out, uint32_t inFeatures,
                   uint32_t outFeatures, uint32_t firstIn, uint32_t inCount, uint32_t firstOut,
                   uint32_t outCount, uint32_t bits, uint32_t zeroOffset, uint32_t group) {
  const Gptq args{qweight, qzeros,  scales,   gIdx,     out,  inFeatures, outFeatures,
                  firstIn, inCount, firstOut, outCount, bits, zeroOffset, group};
  withScaleType(scaleDtype, [&](auto type) {
    constexpr uint32_t D = decltype(type)::value;
    // Widths that divide 32 never cross a word: their own loops.
    switch (bits) {
      case 2: return gptqRun<D, 2>(args);
      case 4: return gptqRun<D, 4>(args);
      case 8: return gptqRun<D, 8>(args);
      default: return gptqRun<D, 0>(args);
    }
  });
}

void st_quant_awq(const uint32_t* qweight, const uint32_t* qzeros, const void* scales,
                  uint32_t scaleDtype, float* out, uint32_t inFeatures, uint32_t outFeatures,
                  uint32_t firstIn, uint32_t inCount, uint32_t firstOut, uint32_t outCount,
                  uint32_t group) {
  const uint32_t words = outFeatures / 8;
  const uint32_t endIn = firstIn + inCount;
  const uint32_t endOut = firstOut + outCount;
  withScaleType(scaleDtype, [&](auto type) {
    constexpr uint32_t D = decltype(type)::value;
    for (uint32_t i0 = firstIn; i0 < endIn; i0 += kInChunk) {
      const uint32_t i1 = endIn - i0 < kInChunk ? endIn : i0 + kInChunk;
      for (uint32_t c = firstOut / 8; c * 8 < endOut; c++) {
        for (uint32_t i = i0; i < i1; i++) {
          const uint32_t g = i / group;
          const uint32_t word = qweight[uint64_t(i - firstIn) * words + c];
          const uint32_t zeros = qzeros[uint64_t(g) * words + c];
          for (uint32_t j = 0; j < 8; j++) {
            const uint32_t o = c * 8 + j;
            if (o < firstOut || o >= endOut) continue;
            // AutoAWQ's order [0, 4, 1, 5, 2, 6, 3, 7]: column 8c+j is nibble (j >> 1) + 4 (j & 1).
            const uint32_t shift = 4 * ((j >> 1) + 4 * (j & 1));
            const int32_t q = int32_t((word >> shift) & 15);
            const int32_t z = int32_t((zeros >> shift) & 15);
            const float s = scaleOf<D>(scales, uint64_t(g) * outFeatures + o);
            out[uint64_t(o - firstOut) * inFeatures + i] = float(q - z) * s;
          }
        }
      }
    }
  });
}

void st_quant_ct_pack(const uint32_t* packed, const void* scales, uint32_t scaleDtype,
                      const uint32_t* zeroPoints, float* out, uint32_t rows, uint32_t firstRow,
                      uint32_t inFeatures, uint32_t bits, uint32_t group, uint32_t groups,
                      uint32_t outFeatures) {
  (void)outFeatures;  // the zero points' extent; the caller checked it
  const uint32_t perWord = 32 / bits;
  const uint32_t mask = (1u << bits) - 1;
  const uint64_t rowWords = (inFeatures + perWord - 1) / perWord;
  for (uint32_t r = 0; r < rows; r++) {
    const uint32_t storedRow = firstRow + r;
    const uint32_t* src = packed + r * rowWords;
    float* dst = out + uint64_t(r) * inFeatures;
    for (uint32_t g = 0; g < groups; g++) {
      const float s = scaleAt(scales, scaleDtype, uint64_t(r) * groups + g);
      // Both stored with an offset of 2^(bits-1): (q - off) - (zp - off) = q - zp.
      int32_t zp = int32_t(1u << (bits - 1));
      if (zeroPoints) {
        const uint32_t word = zeroPoints[uint64_t(storedRow / perWord) * groups + g];
        zp = int32_t((word >> (bits * (storedRow % perWord))) & mask);
      }
      const uint32_t end = inFeatures - g * group < group ? inFeatures : (g + 1) * group;
      for (uint32_t i = g * group; i < end; i++) {
        const uint32_t q = (src[i / perWord] >> (bits * (i % perWord))) & mask;
        dst[i] = float(int32_t(q) - zp) * s;
      }
    }
  }
}

}  // extern "C"
