#include "error.hpp"

#include <charconv>
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
  }
  return "Unknown";
}

Error makeError(ErrorCode code, uint64_t offset, std::string message, std::string tensor) {
  Error e;
  e.code = code;
  e.offset = offset;
  e.message = std::move(message);
  e.tensor = std::move(tensor);
  return e;
}

std::string decimalText(uint64_t magnitude, bool negative) {
  char text[21] = {'-'};
  return std::string(text, std::to_chars(text + 1, text + sizeof text, magnitude).ptr).substr(negative ? 0 : 1);
}

}  // namespace st
