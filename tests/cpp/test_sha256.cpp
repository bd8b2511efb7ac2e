// The SHA-256 kernel (st_sha256_blocks, src/quant/sha256.cpp) against the FIPS 180-2 / NIST
// example messages and every padding length. The buffering between pieces and the padding ship
// in js/stream/sha256.js (tests/js/sha256.test.js splits messages at every offset); here a
// one-shot padding in the test drives the kernel. The digests not from NIST were computed with
// Python's hashlib.
#include <catch.hpp>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "quant/kernels.hpp"

namespace {

constexpr uint32_t kInitial[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                  0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

// The digest of m: the padded message compressed in one call when oneCall, else block by block.
std::vector<uint8_t> digest(const uint8_t* m, size_t n, bool oneCall = true) {
  std::vector<uint8_t> padded(m, m + n);
  padded.push_back(0x80);
  while (padded.size() % 64 != 56) padded.push_back(0);
  const uint64_t bits = uint64_t(n) * 8;
  for (int i = 7; i >= 0; --i) padded.push_back(uint8_t(bits >> (8 * i)));
  uint32_t state[8];
  std::memcpy(state, kInitial, sizeof state);
  const uint32_t blocks = uint32_t(padded.size() / 64);
  if (oneCall) {
    st_sha256_blocks(state, padded.data(), blocks);
  } else {
    for (uint32_t b = 0; b < blocks; ++b) st_sha256_blocks(state, padded.data() + 64 * b, 1);
  }
  std::vector<uint8_t> out(32);
  for (int i = 0; i < 32; ++i) out[i] = uint8_t(state[i / 4] >> (24 - 8 * (i % 4)));
  return out;
}

std::string hex(const std::vector<uint8_t>& d) {
  static const char kHex[] = "0123456789abcdef";
  std::string s;
  for (uint8_t b : d) s += kHex[b >> 4], s += kHex[b & 15];
  return s;
}

std::string hashOf(const std::string& m, bool oneCall = true) {
  return hex(digest(reinterpret_cast<const uint8_t*>(m.data()), m.size(), oneCall));
}

}  // namespace

TEST_CASE("SHA-256 kernel: the NIST example messages", "[sha256]") {
  CHECK(hashOf("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(hashOf("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // 448 bits: the padding needs a block of its own.
  CHECK(hashOf("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  // 896 bits.
  CHECK(hashOf("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklm"
               "nopqrlmnopqrsmnopqrstnopqrstu") ==
        "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
}

TEST_CASE("SHA-256 kernel: one million 'a', in one call and a block a call", "[sha256]") {
  const std::string a(1000000, 'a');
  const char* expected = "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0";
  CHECK(hashOf(a, true) == expected);
  CHECK(hashOf(a, false) == expected);
}

TEST_CASE("SHA-256 kernel: every prefix of a 200-byte message (each padding length)", "[sha256]") {
  // Byte i is (37 i + 11) mod 256. The hash of the 201 digests of m[0..n), n = 0..200, in order.
  std::vector<uint8_t> m(200);
  for (size_t i = 0; i < m.size(); ++i) m[i] = uint8_t((i * 37 + 11) % 256);
  CHECK(hex(digest(m.data(), m.size())) ==
        "5e48d64839a8bff5e2471507af6a49f9990817df437857f4a2007df41266e1b5");
  std::vector<uint8_t> chain;
  for (size_t n = 0; n <= m.size(); ++n) {
    const std::vector<uint8_t> d = digest(m.data(), n);
    chain.insert(chain.end(), d.begin(), d.end());
  }
  CHECK(hex(digest(chain.data(), chain.size())) ==
        "09bba6f21f157de4b22c6e4e84e0fe17119f27833e9cd1aaaeb82855755a2130");
}
