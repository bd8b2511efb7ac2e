// Errors are values in this core: no function throws. An Error carries the reference
// implementation's variant name as its code, so verdicts compare one to one with it.
#pragma once
#include <cstdint>
#include <string>

namespace st {

enum class ErrorCode : uint8_t {
  Ok = 0,
  // Reader rules, FORMAT.md order.
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
  AwkwardInvalidMetadata,   // "form" or "length" missing, or length not a decimal integer
  AwkwardInvalidForm,       // the form is not JSON or breaks awkward's form rules
  AwkwardUnsupportedType,   // a valid form this reader cannot serve (complex128, datetime64...)
  AwkwardMissingBuffer,     // a buffer the form names is not in the file
  AwkwardDtypeMismatch,     // a buffer's dtype differs from the form's
  AwkwardBufferTooShort,    // a buffer holds fewer elements than the length requires
  AwkwardDecreasingOffsets, // offsets decrease, or a list's stop is before its start
  AwkwardOutOfBounds,       // an offset, start, stop, index or tag points outside its content
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

}  // namespace st
