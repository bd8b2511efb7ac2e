// The 22 safetensors dtypes. The enum order is the table's in docs/format.md, "Dtypes"; the
// writer sorts by it descending (U64 first, BOOL last), as the reference does.
#pragma once
#include <cstddef>
#include <cstdint>

namespace st {

enum class Dtype : uint8_t {
  BOOL,
  F4,
  F6_E2M3,
  F6_E3M2,
  U8,
  I8,
  F8_E5M2,
  F8_E4M3,
  F8_E8M0,
  F8_E4M3FNUZ,
  F8_E5M2FNUZ,
  I16,
  U16,
  F16,
  BF16,
  I32,
  U32,
  F32,
  C64,
  F64,
  I64,
  U64,
};

constexpr int kDtypeCount = 22;

// Bits per element: 4 (F4), 6 (F6_*), 8, 16, 32 or 64.
unsigned dtypeBits(Dtype dtype);
// The name as written in headers, e.g. "F8_E4M3".
const char* dtypeName(Dtype dtype);
// Case-sensitive match of a header dtype string; false when unknown.
bool parseDtype(const char* text, size_t length, Dtype& out);

}  // namespace st
