#include "sha256.hpp"

#include <cstring>

namespace st {
namespace {

constexpr uint32_t kInitial[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                  0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

constexpr uint32_t kRound[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

inline uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

inline uint32_t loadBigEndian(const uint8_t* p) {
  return (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | uint32_t(p[3]);
}

inline void storeBigEndian(uint8_t* p, uint32_t v) {
  p[0] = uint8_t(v >> 24), p[1] = uint8_t(v >> 16), p[2] = uint8_t(v >> 8), p[3] = uint8_t(v);
}

// One round: the eight working variables are passed rotated rather than moved (d and h are the
// two that change), so eight calls in a row leave them in their original places.
inline void round(uint32_t a, uint32_t b, uint32_t c, uint32_t& d, uint32_t e, uint32_t f,
                  uint32_t g, uint32_t& h, uint32_t kw) {
  const uint32_t t1 = h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + (g ^ (e & (f ^ g))) + kw;
  const uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) | (c & (a | b)));
  d += t1;
  h = t1 + t2;
}

// The compression function over one 64-byte block at `data`. Never inlined, and one block a
// call: the bindings (built for size) call update(), and link-time inlining of this loop into
// them would build it for size too (0.7x); and V8 runs a wasm call to its end in the code it
// started with, so a single long call would stay in the baseline compiler's code (at a tenth of
// the speed) while the optimised one is ready for the next call.
__attribute__((noinline)) void compress(uint32_t* state, const uint8_t* data) {
  uint32_t w[64];
  for (int i = 0; i < 16; ++i) w[i] = loadBigEndian(data + 4 * i);
  for (int i = 16; i < 64; ++i) {
    const uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
    const uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
  uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
  for (int i = 0; i < 64; i += 8) {
    round(a, b, c, d, e, f, g, h, kRound[i] + w[i]);
    round(h, a, b, c, d, e, f, g, kRound[i + 1] + w[i + 1]);
    round(g, h, a, b, c, d, e, f, kRound[i + 2] + w[i + 2]);
    round(f, g, h, a, b, c, d, e, kRound[i + 3] + w[i + 3]);
    round(e, f, g, h, a, b, c, d, kRound[i + 4] + w[i + 4]);
    round(d, e, f, g, h, a, b, c, kRound[i + 5] + w[i + 5]);
    round(c, d, e, f, g, h, a, b, kRound[i + 6] + w[i + 6]);
    round(b, c, d, e, f, g, h, a, kRound[i + 7] + w[i + 7]);
  }
  state[0] += a, state[1] += b, state[2] += c, state[3] += d;
  state[4] += e, state[5] += f, state[6] += g, state[7] += h;
}

}  // namespace

void Sha256::reset() {
  std::memcpy(state_, kInitial, sizeof state_);
  length_ = 0;
  buffered_ = 0;
}

void Sha256::update(const uint8_t* data, size_t n) {
  if (n == 0) return;
  length_ += n;
  if (buffered_ > 0) {
    const size_t take = n < kBlockBytes - buffered_ ? n : kBlockBytes - buffered_;
    std::memcpy(buffer_ + buffered_, data, take);
    buffered_ += uint32_t(take);
    data += take, n -= take;
    if (buffered_ < kBlockBytes) return;
    compress(state_, buffer_);
    buffered_ = 0;
  }
  for (; n >= kBlockBytes; data += kBlockBytes, n -= kBlockBytes)
    compress(state_, data);  // straight from the caller's bytes, no copy
  if (n > 0) std::memcpy(buffer_, data, n);
  buffered_ = uint32_t(n);
}

void Sha256::finish(uint8_t* out) {
  const uint64_t bits = length_ * 8;
  // Padding: 0x80, zeros up to 56 mod 64, the message's length in bits (big-endian uint64).
  buffer_[buffered_++] = 0x80;
  if (buffered_ > kBlockBytes - 8) {
    std::memset(buffer_ + buffered_, 0, kBlockBytes - buffered_);
    compress(state_, buffer_);
    buffered_ = 0;
  }
  std::memset(buffer_ + buffered_, 0, kBlockBytes - 8 - buffered_);
  storeBigEndian(buffer_ + 56, uint32_t(bits >> 32));
  storeBigEndian(buffer_ + 60, uint32_t(bits));
  compress(state_, buffer_);
  for (int i = 0; i < 8; ++i) storeBigEndian(out + 4 * i, state_[i]);
  reset();
}

std::string Sha256::hexDigest() {
  uint8_t digest[kDigestBytes];
  finish(digest);
  static const char kHex[] = "0123456789abcdef";
  std::string hex(2 * kDigestBytes, '0');
  for (size_t i = 0; i < kDigestBytes; ++i) {
    hex[2 * i] = kHex[digest[i] >> 4];
    hex[2 * i + 1] = kHex[digest[i] & 15];
  }
  return hex;
}

}  // namespace st
