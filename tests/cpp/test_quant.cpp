// The dequantization kernels (src/quant/) against the formulas of issue 15 written out here
// plainly: the small formats through std::ldexp in double (exact for every value they hold),
// then the float32 arithmetic in the spec's order; packed inputs built by packers of this file.
#include <algorithm>
#include <catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "quant/kernels.hpp"

namespace {

uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

float fromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Equal bits, or both NaN.
bool same(float a, float b) { return (std::isnan(a) && std::isnan(b)) || bitsOf(a) == bitsOf(b); }

// E4M3FN: 1 sign, 4 exponent (bias 7), 3 mantissa bits; subnormals; NaN at S.1111.111.
float refE4m3(uint8_t b) {
  const int e = (b >> 3) & 15;
  const int m = b & 7;
  if ((b & 0x7F) == 0x7F) return std::nanf("");
  const double v = e == 0 ? std::ldexp(m, -9) : std::ldexp(8 + m, e - 10);
  return float(b & 0x80 ? -v : v);
}

// FP4 E2M1.
float refFp4(uint8_t n) {
  const double magnitudes[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
  const double v = magnitudes[n & 7];
  return float(n & 8 ? -v : v);
}

float refF16(uint16_t h) {
  const int e = (h >> 10) & 31;
  const int m = h & 0x3FF;
  double v = e == 0    ? std::ldexp(m, -24)
             : e == 31 ? (m ? NAN : INFINITY)
                       : std::ldexp(1024 + m, e - 25);
  return float(h & 0x8000 ? -v : v);
}

float refBf16(uint16_t h) { return fromBits(uint32_t(h) << 16); }

std::mt19937& rng() {
  static std::mt19937 r(20240515);
  return r;
}

uint32_t rand32() { return rng()(); }

// A finite scale of the given type (kScale*), stored into `bytes` at index i; returns its value.
float putScale(std::vector<uint8_t>& bytes, uint32_t dtype, size_t i) {
  switch (dtype) {
    case kScaleF16: {
      uint16_t h = uint16_t(rand32() & 0x7BFF);         // exponent below 31: finite
      if (i % 7 == 3) h = uint16_t(rand32() & 0x83FF);  // a subnormal
      std::memcpy(&bytes[i * 2], &h, 2);
      return refF16(h);
    }
    case kScaleBF16: {
      uint16_t h = uint16_t((rand32() & 0x3FFF) | 0x3000);
      std::memcpy(&bytes[i * 2], &h, 2);
      return refBf16(h);
    }
    case kScaleE4M3: {
      uint8_t b = uint8_t(rand32() % 0x7F);
      bytes[i] = b;
      return refE4m3(b);
    }
    default: {
      float f = float(rand32() % 100000) / 4096.0f - 10.0f;
      std::memcpy(&bytes[i * 4], &f, 4);
      return f;
    }
  }
}

size_t scaleSize(uint32_t dtype) { return dtype == kScaleF32 ? 4 : dtype == kScaleE4M3 ? 1 : 2; }

// A little-endian bit stream written `bits` at a time.
void putBits(std::vector<uint32_t>& words, uint64_t at, uint32_t bits, uint32_t v) {
  for (uint32_t k = 0; k < bits; k++, at++)
    if (v >> k & 1) words[at / 32] |= 1u << (at % 32);
}

}  // namespace

TEST_CASE("quant: fp8Block decodes every E4M3FN code", "[quant]") {
  std::vector<uint8_t> w(256);
  for (int i = 0; i < 256; i++) w[i] = uint8_t(i);
  const float one = 1.0f;
  std::vector<float> out(256);
  st_quant_fp8_block(w.data(), &one, kScaleF32, out.data(), 2, 128, 0, 128, 128, 1);
  for (int i = 0; i < 256; i++) {
    INFO("code " << i);
    CHECK(same(out[i], refE4m3(uint8_t(i))));
  }
  CHECK(out[0x7E] == 448.0f);
  CHECK(out[0xFE] == -448.0f);
  CHECK(out[0x01] == std::ldexp(1.0f, -9));
  CHECK(out[0x08] == std::ldexp(1.0f, -6));
  // NaN as PyTorch widens it: the mantissa bits in place.
  CHECK(bitsOf(out[0x7F]) == 0x7FF00000u);
  CHECK(bitsOf(out[0xFF]) == 0xFFF00000u);
  CHECK(bitsOf(out[0x80]) == 0x80000000u);  // -0
  CHECK(bitsOf(out[0x00]) == 0);
}

TEST_CASE("quant: fp8Block with partial blocks, a first row inside a block, each scale type",
          "[quant]") {
  for (uint32_t dtype : {kScaleF32, kScaleF16, kScaleBF16, kScaleE4M3}) {
    INFO("scale dtype " << dtype);
    const uint32_t totalRows = 45, cols = 300, blockRows = 16, blockCols = 128;
    const uint32_t scaleRows = (totalRows + blockRows - 1) / blockRows;
    const uint32_t scaleCols = (cols + blockCols - 1) / blockCols;
    std::vector<uint8_t> w(size_t(totalRows) * cols);
    for (auto& b : w) b = uint8_t(rand32());
    std::vector<uint8_t> scaleBytes(scaleRows * scaleCols * scaleSize(dtype));
    std::vector<float> scale(scaleRows * scaleCols);
    for (size_t i = 0; i < scale.size(); i++) scale[i] = putScale(scaleBytes, dtype, i);
    for (uint32_t firstRow : {0u, 5u, 16u, 31u}) {
      const uint32_t rows = totalRows - firstRow - (firstRow == 5 ? 3 : 0);
      std::vector<float> out(size_t(rows) * cols, -1.0f);
      const uint32_t firstBlock = firstRow / blockRows;
      st_quant_fp8_block(w.data() + size_t(firstRow) * cols,
                         scaleBytes.data() + firstBlock * scaleCols * scaleSize(dtype), dtype,
                         out.data(), rows, cols, firstRow, blockRows, blockCols, scaleCols);
      size_t bad = 0;
      for (uint32_t r = 0; r < rows; r++) {
        for (uint32_t c = 0; c < cols; c++) {
          const uint32_t R = firstRow + r;
          const float s = scale[(R / blockRows) * scaleCols + c / blockCols];
          const float y = refE4m3(w[size_t(R) * cols + c]) * s;
          if (!same(out[size_t(r) * cols + c], y)) bad++;
        }
      }
      INFO("first row " << firstRow);
      CHECK(bad == 0);
    }
  }
}

TEST_CASE("quant: mxfp4 decodes all 16 codes at scales 0, 1, 127, 254, 255 (ldexp)", "[quant]") {
  const std::vector<uint8_t> exponents = {0, 1, 127, 254, 255, 100, 130};
  std::vector<uint8_t> blocks(exponents.size() * 16);
  for (size_t g = 0; g < exponents.size(); g++) {
    for (int k = 0; k < 16; k++) {
      // Each group holds every code in both nibbles.
      blocks[g * 16 + k] = uint8_t((k + g) % 16 | ((15 - k) << 4));
    }
  }
  std::vector<float> out(exponents.size() * 32);
  st_quant_mxfp4(blocks.data(), exponents.data(), out.data(), uint32_t(exponents.size()));
  for (size_t g = 0; g < exponents.size(); g++) {
    for (int k = 0; k < 32; k++) {
      const uint8_t b = blocks[g * 16 + k / 2];
      const uint8_t n = k % 2 ? b >> 4 : b & 15;
      // Exact in double; float() rounds only where float32 overflows.
      const float y = float(std::ldexp(double(refFp4(n)), int(exponents[g]) - 127));
      INFO("group " << g << " element " << k << " code " << int(n));
      CHECK(same(out[g * 32 + k], y));
    }
  }
  // The edges the spec names: 0.5 * 2^128 = 2^127 (not inf); scale 0 gives exact subnormals.
  const uint8_t half[16] = {1};
  const uint8_t s255 = 255, s0 = 0;
  float v[32];
  st_quant_mxfp4(half, &s255, v, 1);
  CHECK(v[0] == std::ldexp(1.0f, 127));
  st_quant_mxfp4(half, &s0, v, 1);
  CHECK(v[0] == std::ldexp(1.0f, -128));
  CHECK(bitsOf(v[1]) == 0);
}

TEST_CASE("quant: nvfp4 divides (compressed-tensors) or multiplies (ModelOpt)", "[quant]") {
  struct Shape {
    uint32_t rows, cols, group;
  };
  for (Shape sh : {Shape{5, 64, 16}, Shape{3, 40, 16}, Shape{4, 36, 6}, Shape{2, 96, 32}}) {
    const uint32_t scaleCols = (sh.cols + sh.group - 1) / sh.group;
    std::vector<uint8_t> packed(size_t(sh.rows) * sh.cols / 2);
    for (auto& b : packed) b = uint8_t(rand32());
    std::vector<uint8_t> scales(sh.rows * scaleCols);
    for (auto& s : scales) s = uint8_t(rand32() % 0x7F);
    const float global = 0.0123f;
    for (uint32_t flags : {0u, 1u, 2u, 3u}) {
      const bool divide = flags & kNvDivide, plus = flags & kNvPositiveZero;
      std::vector<float> out(size_t(sh.rows) * sh.cols);
      st_quant_nvfp4(packed.data(), scales.data(), out.data(), sh.rows, sh.cols, sh.group,
                     scaleCols, global, flags);
      size_t bad = 0;
      for (uint32_t r = 0; r < sh.rows; r++) {
        for (uint32_t c = 0; c < sh.cols; c++) {
          const float s = refE4m3(scales[r * scaleCols + c / sh.group]);
          const float eff = divide ? s / global : s * global;
          const uint8_t b = packed[(size_t(r) * sh.cols + c) / 2];
          const uint8_t n = c % 2 ? b >> 4 : b & 15;
          const float y = (plus && n == 8 ? 0.0f : refFp4(n)) * eff;
          if (!same(out[size_t(r) * sh.cols + c], y)) bad++;
        }
      }
      INFO("rows " << sh.rows << " cols " << sh.cols << " group " << sh.group << " divide "
                   << divide << " +0 " << plus);
      CHECK(bad == 0);
    }
  }
}

TEST_CASE("quant: gptq at 2, 3, 4 and 8 bits with a shuffled g_idx, v1 and v2 zeros", "[quant]") {
  const uint32_t in = 128, out = 64, group = 32, groups = in / group;
  for (uint32_t bits : {2u, 3u, 4u, 8u}) {
    const uint32_t mask = (1u << bits) - 1;
    std::vector<uint32_t> q(size_t(in) * out), z(size_t(groups) * out);
    for (auto& v : q) v = rand32() & mask;
    for (auto& v : z) v = rand32() & mask;
    std::vector<int32_t> gIdx(in);
    for (uint32_t i = 0; i < in; i++) gIdx[i] = int32_t(i / group);
    std::shuffle(gIdx.begin(), gIdx.end(), rng());
    // qweight [in*bits/32, out]: column o's stream, element i at bit i*bits.
    std::vector<uint32_t> qweight(size_t(in) * bits / 32 * out, 0);
    std::vector<uint32_t> column(size_t(in) * bits / 32);
    for (uint32_t o = 0; o < out; o++) {
      std::fill(column.begin(), column.end(), 0);
      for (uint32_t i = 0; i < in; i++) putBits(column, uint64_t(i) * bits, bits, q[i * out + o]);
      for (size_t w = 0; w < column.size(); w++) qweight[w * out + o] = column[w];
    }
    // qzeros [G, out*bits/32]: row g's stream, output o at bit o*bits.
    const uint32_t zeroWords = out * bits / 32;
    std::vector<uint32_t> qzeros(size_t(groups) * zeroWords, 0);
    for (uint32_t g = 0; g < groups; g++) {
      std::vector<uint32_t> row(zeroWords, 0);
      for (uint32_t o = 0; o < out; o++) putBits(row, uint64_t(o) * bits, bits, z[g * out + o]);
      std::copy(row.begin(), row.end(), qzeros.begin() + g * zeroWords);
    }
    std::vector<uint8_t> scaleBytes(size_t(groups) * out * 2);
    std::vector<float> scale(size_t(groups) * out);
    for (size_t k = 0; k < scale.size(); k++) scale[k] = putScale(scaleBytes, kScaleF16, k);
    for (uint32_t zeroOffset : {1u, 0u}) {
      const uint32_t firstIn = 32, inCount = 96, firstOut = 3, outCount = 50;
      std::vector<float> y(size_t(outCount) * in, 7.0f);
      st_quant_gptq(qweight.data() + firstIn * bits / 32 * out, qzeros.data(), scaleBytes.data(),
                    kScaleF16, gIdx.data(), y.data(), in, out, firstIn, inCount, firstOut, outCount,
                    bits, zeroOffset, 0);
      size_t bad = 0, untouched = 0;
      for (uint32_t o = firstOut; o < firstOut + outCount; o++) {
        for (uint32_t i = 0; i < in; i++) {
          const float got = y[size_t(o - firstOut) * in + i];
          if (i < firstIn) {
            untouched += got == 7.0f;
            continue;
          }
          const uint32_t g = uint32_t(gIdx[i]);
          const int32_t d =
              int32_t(q[i * out + o]) - (int32_t(z[g * out + o]) + int32_t(zeroOffset));
          if (!same(got, scale[g * out + o] * float(d))) bad++;
        }
      }
      INFO("bits " << bits << " zero offset " << zeroOffset);
      CHECK(bad == 0);
      CHECK(untouched == size_t(outCount) * firstIn);
    }
    // Without g_idx: g = i / group.
    std::vector<float> y(size_t(out) * in);
    st_quant_gptq(qweight.data(), qzeros.data(), scaleBytes.data(), kScaleF16, nullptr, y.data(),
                  in, out, 0, in, 0, out, bits, 1, group);
    size_t bad = 0;
    for (uint32_t o = 0; o < out; o++) {
      for (uint32_t i = 0; i < in; i++) {
        const uint32_t g = i / group;
        const int32_t d = int32_t(q[i * out + o]) - (int32_t(z[g * out + o]) + 1);
        if (!same(y[size_t(o) * in + i], scale[g * out + o] * float(d))) bad++;
      }
    }
    CHECK(bad == 0);
  }
}

TEST_CASE("quant: awq in AutoAWQ's nibble order", "[quant]") {
  const uint32_t in = 50, out = 24, group = 16, groups = (in + group - 1) / group;
  const int order[8] = {0, 4, 1, 5, 2, 6, 3, 7};
  std::vector<uint32_t> q(size_t(in) * out), z(size_t(groups) * out);
  for (auto& v : q) v = rand32() & 15;
  for (auto& v : z) v = rand32() & 15;
  std::vector<uint32_t> qweight(size_t(in) * out / 8, 0), qzeros(size_t(groups) * out / 8, 0);
  for (uint32_t i = 0; i < in; i++)
    for (uint32_t o = 0; o < out; o++)
      qweight[i * (out / 8) + o / 8] |= q[i * out + o] << (4 * order[o % 8]);
  for (uint32_t g = 0; g < groups; g++)
    for (uint32_t o = 0; o < out; o++)
      qzeros[g * (out / 8) + o / 8] |= z[g * out + o] << (4 * order[o % 8]);
  for (uint32_t dtype : {kScaleF16, kScaleF32}) {
    std::vector<uint8_t> scaleBytes(size_t(groups) * out * scaleSize(dtype));
    std::vector<float> scale(size_t(groups) * out);
    for (size_t k = 0; k < scale.size(); k++) scale[k] = putScale(scaleBytes, dtype, k);
    const uint32_t firstIn = 16, inCount = 34, firstOut = 5, outCount = 17;
    std::vector<float> y(size_t(outCount) * in);
    st_quant_awq(qweight.data() + firstIn * (out / 8), qzeros.data(), scaleBytes.data(), dtype,
                 y.data(), in, out, firstIn, inCount, firstOut, outCount, group);
    size_t bad = 0;
    for (uint32_t o = firstOut; o < firstOut + outCount; o++) {
      for (uint32_t i = firstIn; i < firstIn + inCount; i++) {
        const uint32_t g = i / group;
        const float d = float(int32_t(q[i * out + o]) - int32_t(z[g * out + o]));
        if (!same(y[size_t(o - firstOut) * in + i], d * scale[g * out + o])) bad++;
      }
    }
    INFO("scale dtype " << dtype);
    CHECK(bad == 0);
  }
}

TEST_CASE("quant: nf4 from an odd first element, high nibble first", "[quant]") {
  const uint32_t n = 301, blocksize = 64, blocks = (n + blocksize - 1) / blocksize;
  std::vector<uint8_t> nib(n);
  for (auto& v : nib) v = uint8_t(rand32() & 15);
  std::vector<uint8_t> packed((n + 1) / 2, 0);
  for (uint32_t k = 0; k < n; k++) packed[k / 2] |= uint8_t(k % 2 ? nib[k] : nib[k] << 4);
  std::vector<float> quantMap(16), absmax(blocks);
  for (auto& v : quantMap) v = float(int32_t(rand32() % 2001) - 1000) / 1000.0f;
  for (auto& v : absmax) v = float(rand32() % 1000) / 997.0f;
  for (uint32_t first : {77u, 0u, 64u, 299u}) {
    const uint32_t count = first + 200 <= n ? 200 : n - first;
    std::vector<float> out(count);
    st_quant_nf4(packed.data() + first / 2, absmax.data() + first / blocksize, quantMap.data(),
                 out.data(), first, count, blocksize);
    size_t bad = 0;
    for (uint32_t k = first; k < first + count; k++)
      if (!same(out[k - first], quantMap[nib[k]] * absmax[k / blocksize])) bad++;
    INFO("first " << first);
    CHECK(bad == 0);
  }
}

TEST_CASE("quant: nf4Absmax (double quantisation) with a partial last nested block", "[quant]") {
  const uint32_t blocks = 600, nestedBlock = 256, nested = (blocks + nestedBlock - 1) / nestedBlock;
  std::vector<uint8_t> absmax(blocks);
  for (auto& v : absmax) v = uint8_t(rand32());
  std::vector<float> nestedMap(256), nestedAbsmax(nested);
  for (auto& v : nestedMap) v = float(int32_t(rand32() % 2001) - 1000) / 1000.0f;
  for (auto& v : nestedAbsmax) v = float(rand32() % 1000) / 311.0f;
  const float offset = 0.0371f;
  const uint32_t firstBlock = 130, count = blocks - firstBlock;
  std::vector<float> out(count);
  st_quant_nf4_absmax(absmax.data() + firstBlock, nestedMap.data(), nestedAbsmax.data(), offset,
                      out.data(), firstBlock, count, nestedBlock);
  size_t bad = 0;
  for (uint32_t b = firstBlock; b < blocks; b++) {
    const float a = nestedMap[absmax[b]] * nestedAbsmax[b / nestedBlock];
    if (!same(out[b - firstBlock], a + offset)) bad++;
  }
  CHECK(bad == 0);
}

TEST_CASE("quant: ctPack at 4 and 8 bits, grouped and per channel, with and without zero points",
          "[quant]") {
  const uint32_t out = 13, in = 70;
  for (uint32_t bits : {4u, 8u}) {
    const uint32_t pf = 32 / bits, mask = (1u << bits) - 1, off = 1u << (bits - 1);
    const uint32_t rowWords = (in + pf - 1) / pf;
    std::vector<uint32_t> q(size_t(out) * in);
    for (auto& v : q) v = rand32() & mask;
    std::vector<uint32_t> packed(size_t(out) * rowWords, 0);
    for (uint32_t r = 0; r < out; r++)
      for (uint32_t i = 0; i < in; i++)
        packed[r * rowWords + i / pf] |= q[r * in + i] << (bits * (i % pf));
    for (uint32_t group : {32u, in}) {
      const uint32_t groups = (in + group - 1) / group;
      std::vector<uint32_t> zp(size_t(out) * groups);
      for (auto& v : zp) v = rand32() & mask;
      // Packed along out: [ceil(out/pf), groups].
      std::vector<uint32_t> zeroPoints(size_t((out + pf - 1) / pf) * groups, 0);
      for (uint32_t r = 0; r < out; r++)
        for (uint32_t g = 0; g < groups; g++)
          zeroPoints[(r / pf) * groups + g] |= zp[r * groups + g] << (bits * (r % pf));
      std::vector<uint8_t> scaleBytes(size_t(out) * groups * 2);
      std::vector<float> scale(size_t(out) * groups);
      for (size_t k = 0; k < scale.size(); k++) scale[k] = putScale(scaleBytes, kScaleBF16, k);
      for (bool withZp : {false, true}) {
        const uint32_t firstRow = 3, rows = 9;
        std::vector<float> y(size_t(rows) * in);
        st_quant_ct_pack(packed.data() + firstRow * rowWords,
                         scaleBytes.data() + firstRow * groups * 2, kScaleBF16,
                         withZp ? zeroPoints.data() : nullptr, y.data(), rows, firstRow, in, bits,
                         group, groups, out);
        size_t bad = 0;
        for (uint32_t r = firstRow; r < firstRow + rows; r++) {
          for (uint32_t i = 0; i < in; i++) {
            const uint32_t g = i / group;
            const int32_t qo = int32_t(q[r * in + i]) - int32_t(off);
            const int32_t zo = withZp ? int32_t(zp[r * groups + g]) - int32_t(off) : 0;
            if (!same(y[size_t(r - firstRow) * in + i], float(qo - zo) * scale[r * groups + g]))
              bad++;
          }
        }
        INFO("bits " << bits << " group " << group << " zero points " << withZp);
        CHECK(bad == 0);
      }
    }
  }
}
