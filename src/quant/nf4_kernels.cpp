// bitsandbytes 4-bit (NF4, and FP4 through its stored quant map) and its double-quantised absmax.
#include "kernels.hpp"

extern "C" {

void st_quant_nf4_absmax(const uint8_t* absmax, const float* nestedMap, const float* nestedAbsmax,
                         float offset, float* out, uint32_t firstBlock, uint32_t count,
                         uint32_t nestedBlock) {
  for (uint32_t j = 0; j < count; j++) {
    const float a = nestedMap[absmax[j]] * nestedAbsmax[(firstBlock + j) / nestedBlock];
    out[j] = a + offset;
  }
}

void st_quant_nf4(const uint8_t* packed, const float* absmax, const float* quantMap, float* out,
                  uint32_t first, uint32_t count, uint32_t blocksize) {
  const uint32_t firstBlock = first / blocksize;
  const uint32_t firstByte = first / 2;
  const uint32_t end = first + count;
  for (uint32_t k = first; k < end;) {
    const uint32_t block = k / blocksize;
    const uint64_t next = uint64_t(block + 1) * blocksize;
    const uint32_t blockEnd = next < end ? uint32_t(next) : end;
    const float a = absmax[block - firstBlock];
    // An odd element first (the low nibble of its byte), then whole bytes, high nibble first.
    if (k % 2 && k < blockEnd) {
      out[k - first] = quantMap[packed[k / 2 - firstByte] & 15] * a;
      k++;
    }
    for (; k + 2 <= blockEnd; k += 2) {
      const uint32_t b = packed[k / 2 - firstByte];
      out[k - first] = quantMap[b >> 4] * a;
      out[k + 1 - first] = quantMap[b & 15] * a;
    }
    if (k < blockEnd) {
      out[k - first] = quantMap[packed[k / 2 - firstByte] >> 4] * a;
      k++;
    }
  }
}

}  // extern "C"
