#include "error.hpp"

#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <utility>

namespace st {

const char* errorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::Ok: return "Ok";
    case ErrorCode::HeaderTooSmall: return "HeaderTooSmall";
    case ErrorCode::HeaderTooLarge: return "HeaderTooLarge";
    case ErrorCode::InvalidHeaderLength: return "InvalidHeaderLength";
    case ErrorCode::InvalidHeader: return "InvalidHeader";
    case ErrorCode::InvalidHeaderDeserialization: return "InvalidHeaderDeserialization";
    case ErrorCode::InvalidOffset: return "InvalidOffset";
    case ErrorCode::ValidationOverflow: return "ValidationOverflow";
    case ErrorCode::MisalignedSlice: return "MisalignedSlice";
    case ErrorCode::TensorInvalidInfo: return "TensorInvalidInfo";
    case ErrorCode::MetadataIncompleteBuffer: return "MetadataIncompleteBuffer";
    case ErrorCode::TensorNotFound: return "TensorNotFound";
    case ErrorCode::TooManySlices: return "TooManySlices";
    case ErrorCode::SliceOutOfRange: return "SliceOutOfRange";
    case ErrorCode::InvalidSlice: return "InvalidSlice";
    case ErrorCode::AwkwardInvalidMetadata: return "AwkwardInvalidMetadata";
    case ErrorCode::AwkwardInvalidForm: return "AwkwardInvalidForm";
    case ErrorCode::AwkwardUnsupportedType: return "AwkwardUnsupportedType";
    case ErrorCode::AwkwardMissingBuffer: return "AwkwardMissingBuffer";
    case ErrorCode::AwkwardDtypeMismatch: return "AwkwardDtypeMismatch";
    case ErrorCode::AwkwardBufferTooShort: return "AwkwardBufferTooShort";
    case ErrorCode::AwkwardDecreasingOffsets: return "AwkwardDecreasingOffsets";
    case ErrorCode::AwkwardOutOfBounds: return "AwkwardOutOfBounds";
    case ErrorCode::InvalidIndex: return "InvalidIndex";
    case ErrorCode::UnsafeShardPath: return "UnsafeShardPath";
    case ErrorCode::OutOfMemory: return "OutOfMemory";
  }
  return "Unknown";
}

bool heapHolds(uint64_t bytes) {
  // Called through a volatile pointer: the optimiser may otherwise fold malloc-then-free into
  // "succeeded" and drop both calls.
  static void* (*volatile const allocate)(size_t) = std::malloc;
  if (bytes > SIZE_MAX) return false;
  void* block = allocate(static_cast<size_t>(bytes));
  if (block == nullptr) return false;
  std::free(block);
  return true;
}

Error makeError(ErrorCode code, uint64_t offset, std::string message, std::string tensor) {
  Error e;
  e.code = code;
  e.offset = offset;
  e.message = std::move(message);
  e.tensor = std::move(tensor);
  return e;
}

void appendDecimal(std::string& out, uint64_t v) {
  char text[20];
  out.append(text, std::to_chars(text, text + sizeof text, v).ptr);
}

std::string decimalText(uint64_t magnitude, bool negative) {
  std::string out = negative ? "-" : "";
  appendDecimal(out, magnitude);
  return out;
}

std::string shapeText(const uint64_t* dims, uint32_t rank) {
  std::string out = "[";
  for (uint32_t i = 0; i < rank; ++i) {
    if (i) out += ", ";
    appendDecimal(out, dims[i]);
  }
  return out + "]";
}

}  // namespace st
