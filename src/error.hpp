// Errors are values in this core: no function throws. An Error carries the reference
// implementation's variant name as its code, so verdicts compare one to one with it.
#pragma once
#include <cstdint>
#include <string>
#include <type_traits>

namespace st {

enum class ErrorCode : uint8_t {
  Ok = 0,
  // Reader rules, in the order of docs/format.md, "Reader rules".
  HeaderTooSmall,
  HeaderTooLarge,
  InvalidHeaderLength,
  InvalidHeader,
  InvalidHeaderDeserialization,
  InvalidOffset,
  ValidationOverflow,
  MisalignedSlice,
  TensorInvalidInfo,
  MetadataIncompleteBuffer,
  TensorNotFound,
  // Slicing.
  TooManySlices,
  SliceOutOfRange,
  InvalidSlice,  // start > stop, or an index spec that does not parse
  // Awkward arrays (awkward.hpp).
  AwkwardInvalidMetadata,    // "form" or "length" missing, or length not a decimal integer
  AwkwardInvalidForm,        // the form is not JSON or breaks awkward's form rules
  AwkwardUnsupportedType,    // a valid form this reader cannot serve (complex128, datetime64...)
  AwkwardMissingBuffer,      // a buffer the form names is not in the file
  AwkwardDtypeMismatch,      // a buffer's dtype differs from the form's
  AwkwardBufferTooShort,     // a buffer holds fewer elements than the length requires
  AwkwardDecreasingOffsets,  // offsets decrease, or a list's stop is before its start
  AwkwardOutOfBounds,        // an offset, start, stop, index or tag points outside its content
  // Sharded sets' indexes (index_map.hpp), with the codes js/ gives them.
  InvalidIndex,     // not JSON, or not {"weight_map": {name: shard path}}
  UnsafeShardPath,  // a shard path outside the index's folder
  // Memory.
  OutOfMemory,  // a buffer the heap cannot hold (checked with heapHolds before it is made)
};

const char* errorCodeName(ErrorCode code);

struct Error {
  ErrorCode code = ErrorCode::Ok;
  std::string tensor;   // the tensor concerned, empty when none
  uint64_t offset = 0;  // absolute byte offset in the file where the problem sits
  std::string message;  // human text with the numbers involved

  explicit operator bool() const { return code != ErrorCode::Ok; }
};

Error makeError(ErrorCode code, uint64_t offset, std::string message, std::string tensor = {});

// Whether `bytes` can be allocated now: a block of that size is allocated and freed at once.
// The core is built without exceptions, so a container that fails to grow aborts the wasm
// module; the few containers sized by the input (a slice plan's ranges) are checked with this
// first and reserved right after, from the free region the check found, and a false is
// reported as OutOfMemory.
bool heapHolds(uint64_t bytes);

// Decimal text of v, for messages. Used instead of std::to_string, whose libc++ version goes
// through snprintf and pulls printf's float formatting (and long-double arithmetic) into the wasm.
std::string decimalText(uint64_t magnitude, bool negative);

// Appends the decimal text of v, with no string of its own (the writer's header numbers).
void appendDecimal(std::string& out, uint64_t v);

// A shape as messages show it: "[2, 3]", "[]" for a scalar. dims may be null when rank is 0.
std::string shapeText(const uint64_t* dims, uint32_t rank);

template <typename T, typename = std::enable_if_t<std::is_integral_v<T>>>
std::string decimal(T v) {
  // The magnitude is taken in unsigned arithmetic so the most negative value does not overflow.
  if constexpr (std::is_signed_v<T>)
    return decimalText(v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v), v < 0);
  else
    return decimalText(v, false);
}

}  // namespace st
