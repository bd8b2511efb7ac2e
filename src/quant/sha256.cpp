// SHA-256's compression function (FIPS 180-4) for f.digest() and verify --sha256. It lives in
// the lazily loaded kernels module rather than the core, so that a page that never hashes never
// downloads it; js/stream/sha256.js does the rest (buffering a partial block, the padding, the
// hex), which is cheap and runs once per piece.
//
// The module may hold no data and no shadow stack (.ci/check-quant-wasm.sh): the round
// constants are immediates (every round is written out, so each index into kRound is a constant
// the compiler folds), and the message schedule is sixteen locals rotated by hand, never an
// array in memory.
#include <stdint.h>

#include "kernels.hpp"

namespace {

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

// One round: the eight working variables are passed rotated rather than moved (d and h are the
// two that change), so eight calls in a row leave them in their original places.
inline void round(uint32_t a, uint32_t b, uint32_t c, uint32_t& d, uint32_t e, uint32_t f,
                  uint32_t g, uint32_t& h, uint32_t kw) {
  const uint32_t t1 = h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + (g ^ (e & (f ^ g))) + kw;
  const uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) | (c & (a | b)));
  d += t1;
  h = t1 + t2;
}

// The next schedule word w[i] (i >= 16) from w[i-16] (updated in place), w[i-15], w[i-7], w[i-2].
inline void schedule(uint32_t& w16, uint32_t w15, uint32_t w7, uint32_t w2) {
  w16 +=
      (rotr(w15, 7) ^ rotr(w15, 18) ^ (w15 >> 3)) + w7 + (rotr(w2, 17) ^ rotr(w2, 19) ^ (w2 >> 10));
}

}  // namespace

// Eight rounds from index I on, over schedule words W0..W7 (named, not indexed).
#define ST_SHA_ROUNDS8(I, W0, W1, W2, W3, W4, W5, W6, W7) \
  round(a, b, c, d, e, f, g, h, kRound[I] + W0);          \
  round(h, a, b, c, d, e, f, g, kRound[I + 1] + W1);      \
  round(g, h, a, b, c, d, e, f, kRound[I + 2] + W2);      \
  round(f, g, h, a, b, c, d, e, kRound[I + 3] + W3);      \
  round(e, f, g, h, a, b, c, d, kRound[I + 4] + W4);      \
  round(d, e, f, g, h, a, b, c, kRound[I + 5] + W5);      \
  round(c, d, e, f, g, h, a, b, kRound[I + 6] + W6);      \
  round(b, c, d, e, f, g, h, a, kRound[I + 7] + W7)

// The sixteen schedule words after the current sixteen.
#define ST_SHA_SCHEDULE16()    \
  schedule(w0, w1, w9, w14);   \
  schedule(w1, w2, w10, w15);  \
  schedule(w2, w3, w11, w0);   \
  schedule(w3, w4, w12, w1);   \
  schedule(w4, w5, w13, w2);   \
  schedule(w5, w6, w14, w3);   \
  schedule(w6, w7, w15, w4);   \
  schedule(w7, w8, w0, w5);    \
  schedule(w8, w9, w1, w6);    \
  schedule(w9, w10, w2, w7);   \
  schedule(w10, w11, w3, w8);  \
  schedule(w11, w12, w4, w9);  \
  schedule(w12, w13, w5, w10); \
  schedule(w13, w14, w6, w11); \
  schedule(w14, w15, w7, w12); \
  schedule(w15, w0, w8, w13)

#define ST_SHA_ROUNDS16(I)                           \
  ST_SHA_ROUNDS8(I, w0, w1, w2, w3, w4, w5, w6, w7); \
  ST_SHA_ROUNDS8(I + 8, w8, w9, w10, w11, w12, w13, w14, w15)

void st_sha256_blocks(uint32_t* state, const uint8_t* data, uint32_t blocks) {
  for (; blocks > 0; --blocks, data += 64) {
    uint32_t w0 = loadBigEndian(data), w1 = loadBigEndian(data + 4), w2 = loadBigEndian(data + 8),
             w3 = loadBigEndian(data + 12), w4 = loadBigEndian(data + 16),
             w5 = loadBigEndian(data + 20), w6 = loadBigEndian(data + 24),
             w7 = loadBigEndian(data + 28), w8 = loadBigEndian(data + 32),
             w9 = loadBigEndian(data + 36), w10 = loadBigEndian(data + 40),
             w11 = loadBigEndian(data + 44), w12 = loadBigEndian(data + 48),
             w13 = loadBigEndian(data + 52), w14 = loadBigEndian(data + 56),
             w15 = loadBigEndian(data + 60);
    uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
    uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
    ST_SHA_ROUNDS16(0);
    ST_SHA_SCHEDULE16();
    ST_SHA_ROUNDS16(16);
    ST_SHA_SCHEDULE16();
    ST_SHA_ROUNDS16(32);
    ST_SHA_SCHEDULE16();
    ST_SHA_ROUNDS16(48);
    state[0] += a, state[1] += b, state[2] += c, state[3] += d;
    state[4] += e, state[5] += f, state[6] += g, state[7] += h;
  }
}
