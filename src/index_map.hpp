// A sharded checkpoint's index (*.safetensors.index.json: {"metadata": {...}, "weight_map":
// {"tensor name": "shard path", ...}}) parsed as it arrives, in chunks of any size, into compact
// tables: names front-coded with a hash lookup (name_store.hpp), shard paths interned, the
// "metadata" object kept as its JSON text. A 60 MB index of 500,000 names keeps about a sixth
// of its bytes; no object per name.
//
// The verdicts are those of js/sharded.js over JSON.parse of the TextDecoder'd (fatal) text:
// the whole text must be JSON (one leading BOM skipped, as TextDecoder does), the top level an
// object with a "weight_map" object of strings, "metadata" an object or null when present;
// other top-level keys may hold any value. Checked further: a name mapped twice in weight_map,
// "weight_map" or "metadata" given twice, a lone surrogate in a name or shard path (\ud800:
// no shard's header can hold it) are InvalidIndex; a shard path outside the index's folder is
// UnsafeShardPath (js/sharded.js checkShardPath's rules), reported as JSON.parse order would
// (only once the whole text is known to be JSON). Input whose first byte is not '{' (a
// .safetensors shard starts with its 8-byte header length) fails on the first chunk.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "error.hpp"
#include "name_store.hpp"

namespace st {

// The words of IndexParser::tables(), by position.
enum IndexTablesWord : uint32_t {
  kIndexCount,           // names
  kIndexShardCount,      // shards
  kIndexShards,          // address of kShardWords words per shard, in path order
  kIndexPaths,           // address of the shard paths' UTF-8, back to back (see kShardPathOffset)
  kIndexPathsLength,     // its bytes
  kIndexMetadata,        // address of the "metadata" object's JSON text
  kIndexMetadataLength,  // its bytes; 0 when there is none or it is null
  kIndexNamesLength,     // bytes of all names' UTF-8 (what namesInto writes)
  kIndexBytesInUse,      // heap bytes the parser holds (bytesInUse)
  kIndexWords,
};

// One shard's words in tables(), by position.
enum IndexShardWord : uint32_t {
  kShardPathOffset,  // into the paths
  kShardPathLength,
  kShardFirstName,  // its first name's position in names order (see namesInto)
  kShardNameCount,
  kShardId,  // its place in order of first appearance in weight_map
  kShardWords,
};

class IndexParser {
 public:
  // The next `n` bytes of the index. False once an error is set (see error()); nothing is
  // read after that.
  bool feed(const uint8_t* data, size_t n);
  // The end of the index: false with error() set unless it was a complete, valid index. The
  // queries below answer after a true finish().
  bool finish();
  const Error& error() const { return error_; }

  uint32_t count() const { return store_.size(); }
  uint32_t shardCount() const { return static_cast<uint32_t>(shards_.size()); }
  // Shard i in path order: sorted as JS sorts strings (by UTF-16 code units).
  std::string_view shardPath(uint32_t i) const { return path(order_[i]); }
  // The path-order index of the shard holding `name`, or -1.
  int32_t shardOf(std::string_view name) const;
  // The "metadata" object's JSON text, as written; empty when absent or null.
  std::string_view metadata() const { return metadata_; }
  // Writes every name's UTF-8 back to back into `blob` (namesLength() bytes), grouped by shard
  // (shards in path order), in weight_map order within a shard; ends[k] (count() of them) is
  // where name k ends in UTF-16 code units of the decoded blob, so JS splits the one string
  // TextDecoder makes of the blob.
  void namesInto(uint8_t* blob, uint32_t* ends) const;
  uint64_t namesLength() const { return namesLength_; }
  size_t bytesInUse() const;

  // For JS (src/bindings.cpp): addresses in the wasm heap as uintptr_t.
  bool feedAt(uintptr_t data, uint32_t n) {
    return feed(reinterpret_cast<const uint8_t*>(data), n);
  }
  std::string errorText() const;  // st::errorJson
  // kIndexWords words (positions: IndexTablesWord), valid until the parser is deleted.
  uintptr_t tables();
  void namesAt(uintptr_t blob, uintptr_t ends) const {
    namesInto(reinterpret_cast<uint8_t*>(blob), reinterpret_cast<uint32_t*>(ends));
  }
  int32_t shardOfAt(uintptr_t name, uint32_t n) const {
    return shardOf(std::string_view(reinterpret_cast<const char*>(name), n));
  }

  static constexpr uint32_t kMaxDepth = 4096;

 private:
  enum class State : uint8_t {
    Bom,         // the first bytes: a BOM (EF BB BF) is skipped
    Start,       // before the top-level '{'
    Rejected,    // the first byte is no '{': the first 9 are read to say what the input is
    KeyOrEnd,    // after '{'
    Key,         // after ',' in an object
    Colon,       // after a key
    Value,       // after ':' or ',' in an array
    ValueOrEnd,  // after '['
    AfterValue,  // ',' or the container's end
    String,
    Number,
    Literal,
    Done,  // after the top-level '}': whitespace only
  };
  // What a string is, which decides whether it is decoded and where it goes.
  enum class Role : uint8_t { Other, TopKey, Name, ShardPath };
  enum class Top : uint8_t { Other, WeightMap, Metadata };  // the top-level value being read
  enum class Escape : uint8_t { None, Backslash, Hex };
  enum class Num : uint8_t { Minus, Zero, Int, Dot, Frac, E, ESign, Exp };

  struct Shard {
    uint32_t pathOffset, pathLength;  // in paths_
    uint32_t names;
    uint32_t firstName;  // entry of its first appearance
    uint64_t bytes;      // its names' UTF-8
    uint64_t units;      // its names' UTF-16 code units
    uint64_t firstAt;    // byte offset of its first appearance
  };

  std::string_view path(uint32_t id) const {
    return std::string_view(paths_).substr(shards_[id].pathOffset, shards_[id].pathLength);
  }
  bool fail(uint64_t at, const char* format, ...);
  bool syntax(uint64_t at, uint8_t found, const char* expected);
  bool tooMuchMetadata();
  void notAnIndex(uint64_t offset, uint8_t b, bool final = false);
  void structural(const uint8_t* p, size_t i);
  void startValue(const uint8_t* p, size_t i);
  void open(bool array, size_t i);
  void close(const uint8_t* p, size_t i);
  void valueDone(const uint8_t* p, size_t end);
  void startString(Role role, bool key, size_t i);
  size_t stringBytes(const uint8_t* p, size_t n, size_t i);
  bool escapeByte(uint8_t b, uint64_t at);
  void codeUnit(uint32_t u, uint64_t at);
  bool loneSurrogate(uint64_t at);
  void stringDone(const uint8_t* p, size_t i);
  size_t numberBytes(const uint8_t* p, size_t n, size_t i);
  uint32_t intern();
  void addEntry();
  bool entryError(uint8_t found);
  bool isArray(uint32_t depth) const { return (kinds_[depth / 64] >> (depth % 64)) & 1; }
  uint64_t at(size_t i) const { return base_ + i; }

  Error error_;
  State state_ = State::Bom;
  Role role_ = Role::Other;
  Top top_ = Top::Other;
  Escape escape_ = Escape::None;
  Num num_ = Num::Minus;
  bool key_ = false;  // the string being read is a key
  bool finished_ = false;
  bool sawWeightMap_ = false;
  bool sawMetadata_ = false;
  bool inWeightMap_ = false;  // the containers open are the top object and the weight_map
  bool skipEntries_ = false;  // an entry broke a rule after an unsafe shard path: read on
  bool capturing_ = false;    // inside the metadata value
  bool nonAscii_ = false;     // the string being read has a non-ASCII character
  bool nameAscii_ = true;     // the current name is ASCII
  bool allAscii_ = true;      // every name is ASCII (its UTF-16 length is its UTF-8 length)
  uint8_t bomRead_ = 0;
  uint8_t head_[9] = {};  // the first bytes, to tell a shard from an index
  uint8_t headLength_ = 0;
  uint8_t literalPos_ = 0;
  uint8_t utf8Need_ = 0, utf8Lo_ = 0, utf8Hi_ = 0;  // a UTF-8 sequence across chunks
  uint8_t hexDigits_ = 0;
  uint32_t hexValue_ = 0;
  uint32_t highSurrogate_ = 0;  // a decoded \uD800-\uDBFF awaiting its low half
  const char* literal_ = nullptr;
  uint32_t depth_ = 0;
  uint64_t kinds_[kMaxDepth / 64 + 1] = {};  // bit d: container d is an array
  uint64_t base_ = 0;                        // offset of the chunk being read
  uint64_t line_ = 1, lineStart_ = 0;        // for messages
  uint64_t stringAt_ = 0;                    // offset of the string's opening quote
  uint64_t entryAt_ = 0;                     // offset of the current name
  uint64_t metadataAt_ = 0;                  // offset of the metadata value
  size_t captureFrom_ = 0;                   // in the chunk being read
  std::string* out_ = nullptr;               // where a decoded string goes
  std::string name_, value_;                 // the current name and shard path
  std::string metadata_;
  NameStore store_;
  std::vector<Shard> shards_;        // in order of first appearance
  std::vector<uint32_t> shardHash_;  // open addressing: shard id + 1, 0 for empty
  uint32_t lastShard_ = UINT32_MAX;  // the previous entry's shard
  uint32_t firstUnsafe_ = UINT32_MAX;
  uint64_t namesLength_ = 0;
  std::vector<uint32_t> order_;       // path order -> shard id
  std::vector<uint32_t> rank_;        // shard id -> path order
  std::vector<uint32_t> shardWords_;  // tables(): kShardWords per shard, path order
  std::string paths_;                 // every shard path, in order of first appearance
  uintptr_t tables_[kIndexWords] = {};
};

// Whether JS's default sort puts a before b: UTF-16 code unit order of UTF-8 strings.
bool utf16Less(std::string_view a, std::string_view b);

// js/sharded.js checkShardPath: a plain relative path inside the index's folder (no scheme,
// no leading '/', no '\', '?', '#' or NUL, no empty, '.' or '..' segment, '%2e' counting as '.').
bool safeShardPath(std::string_view path);

}  // namespace st
