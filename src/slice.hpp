// Slicing a tensor without reading it: turns indexers such as "0, 2:5" into the absolute file
// byte ranges that, concatenated, are the dense row-major slice (docs/format.md, "Slicing").
//
// Safe on any input: every spec string and every indexer value (any int64, in any order) is
// either planned or rejected with an Error value; nothing throws, aborts or overflows.
// Costs: parseSliceSpec is linear in the spec; planSlice takes O(rank + output ranges) time and
// memory, and never iterates over elements, so a slice of a 100 GB tensor plans instantly.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "error.hpp"
#include "header.hpp"

namespace st {

// One indexer per leading dimension. Negative values count from the end, as in Python, but
// nothing is clamped: a value outside the dimension after that is SliceOutOfRange.
struct SliceIndexer {
  enum class Kind : uint8_t { Index, Range };
  Kind kind = Kind::Range;  // Index drops the dimension; Range keeps it
  int64_t start = 0;        // the index for Kind::Index
  int64_t stop = 0;
  bool hasStart = false;  // a missing start is 0
  bool hasStop = false;   // a missing stop is the dimension's size

  // The default-constructed indexer is ":" (the whole dimension).
  static SliceIndexer index(int64_t i) { return {Kind::Index, i, 0, true, false}; }
  static SliceIndexer range(int64_t start, int64_t stop) {
    return {Kind::Range, start, stop, true, true};
  }
};

// Parses a comma-separated list of indexers: "i" or "[start]:[stop]", each an optional '-' and
// decimal digits, with spaces, tabs, CR and LF allowed around tokens. "" (or only whitespace)
// is zero indexers, which selects the whole tensor. Steps ("::2"), ellipsis, empty entries and
// a trailing comma are InvalidSlice, as is a number outside int64; the message names the
// offending text and its position. `out` is replaced; on failure it is empty.
Error parseSliceSpec(std::string_view spec, std::vector<SliceIndexer>& out);

// Absolute file offsets [begin, end).
struct ByteRange {
  uint64_t begin = 0;
  uint64_t end = 0;
};

struct SlicePlan {
  std::vector<uint64_t> shape;    // the slice's shape: integer-indexed dimensions dropped
  uint64_t byteLength = 0;        // the sum of the ranges' lengths
  std::vector<ByteRange> ranges;  // ascending, each non-empty, none adjacent to the next
};

// Plans `count` indexers (indexers may be null when count is 0) against `tensor`, which must be
// an element of `header.tensors` from a successful parse. Errors, in the order checked:
//   TooManySlices    count > rank (a scalar accepts no indexer)
//   then, dimension by dimension (after resolving negative values):
//     SliceOutOfRange  an index outside [0, dim), or a range bound outside [0, dim]
//     InvalidSlice     a range with start > stop
//   MisalignedSlice  a range would begin or end inside a byte (F4, F6_* tensors); the check
//                    is exact, so an F4 slice whose every range is whole bytes is accepted
//   InvalidSlice     more ranges than a std::vector can hold (wasm32: about 2^28)
//   OutOfMemory      more ranges than the heap has room for now (heapHolds)
// Empty results (a size-0 dimension, or start == stop anywhere, start == dim included) succeed
// with byteLength 0 and no ranges. Ranges are maximal: each merges every contiguous element.
// The error offset is the tensor's first byte, or for MisalignedSlice the byte holding the
// first misaligned boundary. `out` is replaced; on failure its contents are unspecified.
Error planSlice(const Header& header, const TensorInfo& tensor, const SliceIndexer* indexers,
                size_t count, SlicePlan& out);

}  // namespace st
