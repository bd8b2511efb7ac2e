// Parsing and validating a safetensors header: the rules of docs/format.md, "Reader rules", in
// the reference's order, with unsigned 64-bit checked arithmetic (size_t is 32 bits in wasm32).
//
// Safe on untrusted input: every function reads only the bytes it is given, allocates in
// proportion to them, and reports failure as an Error value (no exceptions, no aborts).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "dtype.hpp"
#include "error.hpp"

namespace st {

constexpr uint64_t kMaxHeaderLength = 100000000;  // the reference's limit, inclusive
constexpr int kMaxJsonDepth = 127;                // serde_json fails at the 128th container

// A slice of Header::strings.
struct StringRef {
  uint32_t offset = 0;
  uint32_t length = 0;
};

struct TensorInfo {
  uint64_t begin = 0;  // data_offsets, relative to the data buffer (file byte 8 + N)
  uint64_t end = 0;
  StringRef name;
  uint32_t dimsOffset = 0;  // shape = Header::dims[dimsOffset, dimsOffset + rank)
  uint32_t rank = 0;
  Dtype dtype = Dtype::BOOL;
};

struct MetadataEntry {
  StringRef key;
  StringRef value;
};

// The table of a valid file. Strings and shapes live in two arenas so that a header of
// 10,000 tensors costs a handful of allocations, not tens of thousands.
struct Header {
  uint64_t headerLength = 0;  // N
  uint64_t fileLength = 0;
  std::string strings;                  // names, metadata keys and values, back to back
  std::vector<uint64_t> dims;           // all shapes, back to back
  std::vector<TensorInfo> tensors;      // file order: by (begin, end), ties in header order
  std::vector<uint32_t> byName;         // indices of tensors, sorted by name bytes
  bool hasMetadata = false;             // false when absent or null
  std::vector<MetadataEntry> metadata;  // header order

  uint64_t dataOffset() const { return 8 + headerLength; }
  std::string_view str(StringRef ref) const { return {strings.data() + ref.offset, ref.length}; }
  std::string_view name(const TensorInfo& t) const { return str(t.name); }
  const uint64_t* shape(const TensorInfo& t) const { return dims.data() + t.dimsOffset; }
  // Index into tensors, or -1.
  int64_t find(std::string_view name) const;
  // Absolute file offsets of a tensor's bytes.
  uint64_t absoluteBegin(const TensorInfo& t) const { return dataOffset() + t.begin; }
  uint64_t elementCount(const TensorInfo& t) const;  // valid tensors never overflow
};

// Rules 1-3: reads the 8-byte length prefix. `prefix` holds the file's first `available`
// bytes; fileLength is the whole file's length. On success headerLength = N, and the header
// occupies file bytes [8, 8 + N).
Error readHeaderLength(const uint8_t* prefix, size_t available, uint64_t fileLength,
                       uint64_t& headerLength);

// Rules 4-10 over the N header bytes. On success `out` holds the validated table; on
// failure `out` is left in an unspecified but destructible state.
Error parseHeader(const uint8_t* json, size_t length, uint64_t fileLength, Header& out);

// Rules 1-10 over a buffer that starts at file byte 0 and holds at least 8 + N bytes
// (the whole file, or its first bytes when fileLength says how long the file is).
Error parseFile(const uint8_t* bytes, size_t available, uint64_t fileLength, Header& out);

// Offset of the first byte that is not valid UTF-8, or `length` when all are valid.
size_t findInvalidUtf8(const uint8_t* bytes, size_t length);

}  // namespace st
