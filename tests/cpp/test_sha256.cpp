// sha256.hpp against the FIPS 180-2 / NIST example messages, and split updates against one-shot
// hashes. The digests not from NIST were computed with Python's hashlib.
#include <algorithm>
#include <catch.hpp>
#include <cstring>
#include <string>
#include <vector>

#include "sha256.hpp"

using st::Sha256;

namespace {

std::string hashOf(const std::string& message) {
  Sha256 h;
  h.update(reinterpret_cast<const uint8_t*>(message.data()), message.size());
  return h.hexDigest();
}

// The 200-byte message of the split tests: byte i is (37 i + 11) mod 256.
std::vector<uint8_t> message200() {
  std::vector<uint8_t> m(200);
  for (size_t i = 0; i < m.size(); ++i) m[i] = uint8_t((i * 37 + 11) % 256);
  return m;
}

constexpr const char* kMessage200 =
    "5e48d64839a8bff5e2471507af6a49f9990817df437857f4a2007df41266e1b5";

}  // namespace

TEST_CASE("SHA-256 of the NIST example messages", "[sha256]") {
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

TEST_CASE("SHA-256 of one million 'a', at once and in uneven updates", "[sha256]") {
  const std::string a(1000000, 'a');
  const char* expected = "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0";
  CHECK(hashOf(a) == expected);
  Sha256 h;
  const uint8_t* p = reinterpret_cast<const uint8_t*>(a.data());
  size_t done = 0;
  for (size_t step = 1; done < a.size(); step = step * 3 % 1021 + 1) {
    const size_t n = std::min(step, a.size() - done);
    h.update(p + done, n);
    done += n;
  }
  CHECK(h.length() == a.size());
  CHECK(h.hexDigest() == expected);
}

TEST_CASE("SHA-256 updates split at every offset of a 200-byte message", "[sha256]") {
  const std::vector<uint8_t> m = message200();
  Sha256 h;
  h.update(m.data(), m.size());
  REQUIRE(h.hexDigest() == kMessage200);
  for (size_t split = 0; split <= m.size(); ++split) {
    INFO("split at " << split);
    h.update(m.data(), split);
    h.update(m.data() + split, m.size() - split);
    CHECK(h.hexDigest() == kMessage200);
  }
  // Three pieces: every pair of offsets.
  for (size_t i = 0; i <= m.size(); ++i) {
    for (size_t j = i; j <= m.size(); ++j) {
      h.update(m.data(), i);
      h.update(m.data() + i, j - i);
      h.update(m.data() + j, m.size() - j);
      if (h.hexDigest() != kMessage200) FAIL("splits at " << i << " and " << j);
    }
  }
  // A byte at a time, with empty updates between (null is allowed with no bytes).
  for (uint8_t byte : m) {
    h.update(&byte, 1);
    h.update(nullptr, 0);
  }
  CHECK(h.hexDigest() == kMessage200);
}

TEST_CASE("SHA-256 of every prefix of the 200-byte message (each length's padding)", "[sha256]") {
  // The hash of the 201 digests, of m[0..n) for n = 0..200, in order, one after another.
  const std::vector<uint8_t> m = message200();
  Sha256 chain, h;
  for (size_t n = 0; n <= m.size(); ++n) {
    h.update(m.data(), n);
    uint8_t digest[Sha256::kDigestBytes];
    h.finish(digest);
    chain.update(digest, sizeof digest);
  }
  CHECK(chain.hexDigest() == "09bba6f21f157de4b22c6e4e84e0fe17119f27833e9cd1aaaeb82855755a2130");
}

TEST_CASE("SHA-256 finish resets: the next message starts fresh", "[sha256]") {
  Sha256 h;
  h.update(reinterpret_cast<const uint8_t*>("xyz"), 3);
  h.hexDigest();
  CHECK(h.length() == 0);
  h.update(reinterpret_cast<const uint8_t*>("abc"), 3);
  CHECK(h.hexDigest() == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}
