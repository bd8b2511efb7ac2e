// The tensor names of a sharded index, compact: 500,000 names take about a sixth of their text.
// Names are front-coded in the order they were added (each entry: the length of the prefix it
// shares with the previous name, the rest of its bytes, its shard id when it changes; a full
// name every kBlock entries, a restart point), and an open-addressing table maps the hash of a
// name to its entry. A lookup decodes the candidate's block from its restart point, comparing as
// it goes.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace st {

uint64_t hashBytes(const uint8_t* p, size_t n);

class NameStore {
 public:
  static constexpr uint32_t kBlock = 32;

  // A name added twice: the entries (first < second) and where the second was in the text.
  struct Repeat {
    uint32_t first = 0, second = 0, at = 0;
  };

  // Adds `name`, held by shard `shard`, found at byte `at` of the text. Only before seal().
  void add(std::string_view name, uint32_t shard, uint32_t at);
  // Ends adding: builds the lookup table and frees what adding needed. False when a name was
  // added twice, with the repeat of lowest second entry in `repeat` (the first entry stays the
  // one lookups find).
  bool seal(Repeat& repeat);

  uint32_t size() const { return count_; }
  // Entry i's name and shard id (i < size()).
  std::string nameAt(uint32_t i) const;
  uint32_t shardAt(uint32_t i) const;
  // The entry holding `name`, or -1; its shard in `shard`. After seal().
  int64_t find(std::string_view name, uint32_t& shard) const;
  // Bytes the store holds on the heap (capacities).
  size_t bytesInUse() const;

  // Reads the entries in order.
  class Reader {
   public:
    explicit Reader(const NameStore& store)
        : p_(store.bytes_.data()), end_(p_ + store.bytes_.size()) {}
    // The next name (valid until the next call) and its shard; false after the last.
    bool next(std::string_view& name, uint32_t& shard);

   private:
    const uint8_t* p_;
    const uint8_t* end_;
    std::string name_;
    uint32_t entry_ = 0, shard_ = 0;
  };

 private:
  // Whether entry i is `name`; its shard in `shard` either way.
  bool matches(uint32_t i, std::string_view name, uint32_t& shard) const;
  // Whether entries i and j hold the same name.
  bool same(uint32_t i, uint32_t j) const;

  std::vector<uint8_t> bytes_;      // the entries
  std::vector<uint32_t> restarts_;  // where entry kBlock * k starts in bytes_
  std::string last_;                // the previous name, while adding
  std::vector<uint32_t> hashes_;    // while adding: each entry's hash (32 bits)
  std::vector<uint32_t> offsets_;   // while adding: where each entry is in the text
  // After seal: ((entry + 1) << tagBits_) | (the hash's low tagBits_ bits), 0 for empty; 5/4
  // of size() long, probed from (hash * length) >> 32. The tag spares most decodes.
  std::vector<uint32_t> table_;
  uint32_t count_ = 0;
  uint32_t tagBits_ = 0;
  uint32_t lastShard_ = 0;  // the previous entry's, while adding
};

}  // namespace st
