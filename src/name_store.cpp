#include "name_store.hpp"

#include <cstring>

namespace st {
namespace {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "words compare and hash as loaded");

void putVarint(std::vector<uint8_t>& out, uint32_t v) {
  for (; v >= 0x80; v >>= 7) out.push_back(static_cast<uint8_t>(v | 0x80));
  out.push_back(static_cast<uint8_t>(v));
}

// The store wrote every varint it reads: no bounds to check.
uint32_t getVarint(const uint8_t*& p) {
  uint32_t v = 0;
  for (int shift = 0;; shift += 7) {
    const uint8_t b = *p++;
    v |= static_cast<uint32_t>(b & 0x7f) << shift;
    if (b < 0x80) return v;
  }
}

// An entry: varint (its suffix's length << 1 | 1 when a shard id follows), then, except at a
// restart, varint the length of the prefix it shares with the previous name, then varint its
// shard id when it differs from the previous entry's (always at a restart), then its suffix.
struct Entry {
  uint32_t shard;
  size_t prefix, length;
};

// Reads the head of entry j at p; `e.shard` carries over from the previous entry unless given.
void readEntry(const uint8_t*& p, uint32_t j, Entry& e) {
  const uint32_t head = getVarint(p);
  e.length = head >> 1;
  e.prefix = j % NameStore::kBlock ? getVarint(p) : 0;
  if (head & 1) e.shard = getVarint(p);
}

// 8 bytes at a time: consecutive names share long prefixes ("model.layers.12.mlp.experts.").
size_t commonPrefix(const uint8_t* a, const uint8_t* b, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t x, y;
    std::memcpy(&x, a + i, 8);
    std::memcpy(&y, b + i, 8);
    if (x != y) return i + (__builtin_ctzll(x ^ y) >> 3);
  }
  while (i < n && a[i] == b[i]) ++i;
  return i;
}

const uint8_t* bytesOf(std::string_view s) { return reinterpret_cast<const uint8_t*>(s.data()); }

uint32_t hash32(std::string_view s) {
  return static_cast<uint32_t>(hashBytes(bytesOf(s), s.size()) >> 32);
}

}  // namespace

uint64_t hashBytes(const uint8_t* p, size_t n) {
  uint64_t h = 0x9e3779b97f4a7c15ull ^ (n * 0xff51afd7ed558ccdull);
  for (; n >= 8; p += 8, n -= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    h = (h ^ w) * 0xbf58476d1ce4e5b9ull;
    h ^= h >> 29;
  }
  uint64_t w = 0;
  std::memcpy(&w, p, n);
  h = (h ^ w) * 0x94d049bb133111ebull;
  h ^= h >> 32;
  h *= 0xbf58476d1ce4e5b9ull;
  return h ^ (h >> 29);
}

void NameStore::add(std::string_view name, uint32_t shard, uint32_t at) {
  hashes_.push_back(hash32(name));
  offsets_.push_back(at);
  const bool restart = count_ % kBlock == 0;
  const size_t prefix = restart
                            ? 0
                            : commonPrefix(bytesOf(last_), bytesOf(name),
                                           last_.size() < name.size() ? last_.size() : name.size());
  const bool newShard = restart || shard != lastShard_;
  if (restart) restarts_.push_back(static_cast<uint32_t>(bytes_.size()));
  putVarint(bytes_, static_cast<uint32_t>(name.size() - prefix) << 1 | newShard);
  if (!restart) putVarint(bytes_, static_cast<uint32_t>(prefix));
  if (newShard) putVarint(bytes_, shard);
  lastShard_ = shard;
  bytes_.insert(bytes_.end(), bytesOf(name) + prefix, bytesOf(name) + name.size());
  last_.assign(name);
  ++count_;
}

template <class T>
void release(T& v) {
  T().swap(v);
}

template <class T>
void shrink(std::vector<T>& v) {  // shrink_to_fit does nothing without exceptions in libstdc++
  if (v.capacity() > v.size()) std::vector<T>(v.begin(), v.end()).swap(v);
}

bool NameStore::seal(Repeat& repeat) {
  bool unique = true;
  if (count_) {
    const uint32_t length = count_ + count_ / 4 + 1;
    tagBits_ = static_cast<uint32_t>(__builtin_clz(count_));  // 32 - the bits of count_
    const uint32_t tagMask = (1u << tagBits_) - 1;
    // Entries grouped by their hash's top 8 bits, which is by where they go in the table: each
    // group fills a stretch of it that stays in cache (in entry order, so that a repeat's
    // first entry is the one inserted).
    std::vector<uint32_t> start(257, 0);
    for (uint32_t h : hashes_) ++start[(h >> 24) + 1];
    for (int g = 0; g < 256; ++g) start[g + 1] += start[g];
    std::vector<uint64_t> grouped(count_);
    for (uint32_t e = 0; e < count_; ++e)
      grouped[start[hashes_[e] >> 24]++] = static_cast<uint64_t>(hashes_[e]) << 32 | e;
    release(hashes_);
    table_.assign(length, 0);
    for (uint64_t item : grouped) {
      const uint32_t h = static_cast<uint32_t>(item >> 32), e = static_cast<uint32_t>(item);
      size_t pos = (static_cast<uint64_t>(h) * length) >> 32;
      for (; table_[pos]; pos = pos + 1 == length ? 0 : pos + 1) {
        const uint32_t other = (table_[pos] >> tagBits_) - 1;
        if ((table_[pos] & tagMask) == (h & tagMask) && same(other, e)) break;
      }
      if (!table_[pos]) {
        table_[pos] = (e + 1) << tagBits_ | (h & tagMask);
      } else if (unique || e < repeat.second) {
        repeat = {(table_[pos] >> tagBits_) - 1, e, offsets_[e]};
        unique = false;
      }
    }
  }
  release(hashes_);
  release(offsets_);
  release(last_);
  shrink(bytes_);
  shrink(restarts_);
  return unique;
}

std::string NameStore::nameAt(uint32_t i) const {
  const uint8_t* p = bytes_.data() + restarts_[i / kBlock];
  std::string name;
  Entry e = {};
  for (uint32_t j = i - i % kBlock; j <= i; p += e.length, ++j) {
    readEntry(p, j, e);
    name.resize(e.prefix);
    name.append(reinterpret_cast<const char*>(p), e.length);
  }
  return name;
}

bool NameStore::same(uint32_t i, uint32_t j) const {
  uint32_t shard;
  return matches(j, nameAt(i), shard);
}

bool NameStore::matches(uint32_t i, std::string_view name, uint32_t& shard) const {
  const uint8_t* p = bytes_.data() + restarts_[i / kBlock];
  // The entry decoded so far agrees with `name` on its first `match` bytes.
  size_t match = 0;
  Entry e = {};
  for (uint32_t j = i - i % kBlock;; p += e.length, ++j) {
    readEntry(p, j, e);
    if (match >= e.prefix) {
      const size_t rest = name.size() - e.prefix;
      match =
          e.prefix + commonPrefix(p, bytesOf(name) + e.prefix, e.length < rest ? e.length : rest);
    }
    if (j == i) {
      shard = e.shard;
      return e.prefix + e.length == name.size() && match == name.size();
    }
  }
}

uint32_t NameStore::shardAt(uint32_t i) const {
  const uint8_t* p = bytes_.data() + restarts_[i / kBlock];
  Entry e = {};
  for (uint32_t j = i - i % kBlock; j < i; p += e.length, ++j) readEntry(p, j, e);
  readEntry(p, i, e);
  return e.shard;
}

int64_t NameStore::find(std::string_view name, uint32_t& shard) const {
  if (table_.empty()) return -1;
  const uint32_t h = hash32(name);
  const uint32_t tagMask = (1u << tagBits_) - 1;
  const size_t length = table_.size();
  for (size_t pos = (static_cast<uint64_t>(h) * length) >> 32;;
       pos = pos + 1 == length ? 0 : pos + 1) {
    const uint32_t slot = table_[pos];
    if (!slot) return -1;
    if ((slot & tagMask) != (h & tagMask)) continue;
    const uint32_t entry = (slot >> tagBits_) - 1;
    if (matches(entry, name, shard)) return entry;
  }
}

size_t NameStore::bytesInUse() const {
  return bytes_.capacity() + restarts_.capacity() * sizeof(uint32_t) + last_.capacity() +
         (hashes_.capacity() + offsets_.capacity() + table_.capacity()) * sizeof(uint32_t);
}

bool NameStore::Reader::next(std::string_view& name, uint32_t& shard) {
  if (p_ == end_) return false;
  Entry e = {shard_, 0, 0};
  readEntry(p_, entry_++, e);
  name_.resize(e.prefix);
  name_.append(reinterpret_cast<const char*>(p_), e.length);
  p_ += e.length;
  name = name_;
  shard = shard_ = e.shard;
  return true;
}

}  // namespace st
