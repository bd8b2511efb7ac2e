// SHA-256 (FIPS 180-4), streaming, for `f.digest()` and `verify --sha256`: the hash of a
// tensor's bytes or of a whole file, fed chunk by chunk as the bytes arrive from their source.
//
// No dependency, no exceptions, no allocation: the whole state is the struct below (112 bytes),
// which js/core/ creates and frees through a handle. Portable scalar code (wasm has no SHA
// instructions; its 32-bit rotates are single instructions), built at -O3 (ST_HOT_SOURCES).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace st {

class Sha256 {
 public:
  static constexpr size_t kDigestBytes = 32;
  static constexpr size_t kBlockBytes = 64;

  Sha256() { reset(); }

  // Starts over: the state of a hash of no bytes.
  void reset();

  // Adds `n` bytes at `data` (may be null when n is 0). Any split of a message into updates
  // gives the same digest.
  void update(const uint8_t* data, size_t n);

  // The digest of everything added since the last reset, into out[0..32); then resets.
  void finish(uint8_t* out);

  // finish() as 64 lowercase hex digits.
  std::string hexDigest();

  // Bytes added since the last reset.
  uint64_t length() const { return length_; }

 private:
  uint32_t state_[8];
  uint64_t length_;
  uint8_t buffer_[kBlockBytes];  // a partial block: buffered_ bytes
  uint32_t buffered_;
};

}  // namespace st
