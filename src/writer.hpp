// Planning a safetensors file: the data layout and the exact header bytes, byte for byte as
// the reference writer produces them (docs/format.md, "Writer"). No tensor data passes through
// here: the caller writes plan.header, then each tensor's bytes in plan.order, as they are.
//
// Safe on any input the caller describes truthfully (pointers valid for the stated lengths):
// every failure is an Error value, nothing is written into the plan that the reader would
// reject, and no function throws or aborts.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dtype.hpp"
#include "error.hpp"

namespace st {

// One tensor to write. The plan keeps no pointer into it.
struct WriterTensor {
  std::string_view name;  // any valid UTF-8, "" and embedded NULs included
  Dtype dtype = Dtype::BOOL;
  const uint64_t* shape = nullptr;  // rank dimensions; may be null when rank is 0 (a scalar)
  uint32_t rank = 0;
  uint64_t byteLength = 0;  // the caller's data length: must equal elements * bits / 8
};

// __metadata__ entries in any order; the header lists them sorted by key bytes, which makes
// the output deterministic (the reference orders them by hash).
using WriterMetadata = std::vector<std::pair<std::string_view, std::string_view>>;

struct WritePlan {
  // The file's first 8 + N bytes: N as 8 little-endian bytes, then the compact JSON header
  // padded with spaces to N, a multiple of 8, so the data buffer starts 8-aligned.
  std::string header;
  std::vector<uint32_t> order;    // input indices, in the order their data must follow
  std::vector<uint64_t> offsets;  // by input index: data offset relative to the data buffer
  uint64_t fileLength = 0;        // header.size() + the sum of all byteLengths
};

// Plans a file holding tensors[0, count) and, when metadata is not null, a __metadata__ entry
// (an empty vector writes "__metadata__":{}). Tensors are ordered by dtype descending in
// the order of the table in docs/format.md, "Dtypes" (U64 first, BOOL last), then by name
// bytes ascending, with contiguous offsets from 0.
//
// Checks run in this order, which is the reader's rule order for rules 4-9; the header is
// built only once the input passed them:
//   HeaderTooLarge                more than 100,000,000 tensors (each takes over a byte)
//   InvalidHeader                 a name, metadata key or value that is not valid UTF-8
//   InvalidHeaderDeserialization  a Dtype outside the enum, a tensor named "__metadata__",
//                                 two tensors with one name, two metadata entries with one key
//   then tensor by tensor, in write order:
//   ValidationOverflow            element count or bit count over 64 bits
//   MisalignedSlice               a sub-byte tensor whose bits are not whole bytes (odd F4)
//   TensorInvalidInfo             byteLength != elements * bits / 8
//   ValidationOverflow            the data buffer would end past 2^64 bytes
//   then:
//   HeaderTooLarge                the padded header over 100,000,000 bytes (stops building
//                                 as soon as the JSON alone passes the limit)
//   ValidationOverflow            the file length past 2^64 bytes
// Error.offset is the tensor's planned data offset for the size checks, 0 otherwise;
// Error.tensor names the tensor when one is at fault. Finally the header is parsed with
// parseHeader, whose verdict is returned should it ever reject the plan: the writer never
// plans a file this project's reader would refuse. On failure `out` is left in an
// unspecified but destructible state.
Error planWrite(const WriterTensor* tensors, size_t count, const WriterMetadata* metadata,
                WritePlan& out);

// The same input as plain arrays, so a JS binding can fill a few heap buffers instead of
// one object per tensor. Every pointer must hold the stated number of entries.
struct FlatWriteInput {
  uint32_t tensorCount = 0;
  const char* names = nullptr;            // all tensor names back to back
  const uint32_t* nameLengths = nullptr;  // tensorCount
  const uint8_t* dtypes = nullptr;        // tensorCount Dtype values
  const uint32_t* ranks = nullptr;        // tensorCount
  const uint64_t* dims = nullptr;         // all shapes back to back: the sum of ranks
  const uint64_t* byteLengths = nullptr;  // tensorCount
  bool hasMetadata = false;               // false: no __metadata__ key at all
  uint32_t metadataCount = 0;
  const char* metadataStrings = nullptr;      // key 0, value 0, key 1, value 1, ... back to back
  const uint32_t* metadataLengths = nullptr;  // 2 * metadataCount, in that same order
};

Error planWriteFlat(const FlatWriteInput& in, WritePlan& out);

}  // namespace st
