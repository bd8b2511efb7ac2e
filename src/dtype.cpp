#include "dtype.hpp"

#include <cstring>

namespace st {
namespace {

struct DtypeRow {
  const char* name;
  unsigned char nameLength;
  unsigned char bits;
};

// Indexed by Dtype.
constexpr DtypeRow kRows[kDtypeCount] = {
    {"BOOL", 4, 8},    {"F4", 2, 4},           {"F6_E2M3", 7, 6},      {"F6_E3M2", 7, 6},
    {"U8", 2, 8},      {"I8", 2, 8},           {"F8_E5M2", 7, 8},      {"F8_E4M3", 7, 8},
    {"F8_E8M0", 7, 8}, {"F8_E4M3FNUZ", 11, 8}, {"F8_E5M2FNUZ", 11, 8}, {"I16", 3, 16},
    {"U16", 3, 16},    {"F16", 3, 16},         {"BF16", 4, 16},        {"I32", 3, 32},
    {"U32", 3, 32},    {"F32", 3, 32},         {"C64", 3, 64},         {"F64", 3, 64},
    {"I64", 3, 64},    {"U64", 3, 64},
};

}  // namespace

unsigned dtypeBits(Dtype dtype) { return kRows[static_cast<int>(dtype)].bits; }

const char* dtypeName(Dtype dtype) { return kRows[static_cast<int>(dtype)].name; }

bool parseDtype(const char* text, size_t length, Dtype& out) {
  // 22 short candidates: comparing length first rejects almost all of them without a memcmp.
  for (int i = 0; i < kDtypeCount; ++i) {
    if (kRows[i].nameLength == length && std::memcmp(kRows[i].name, text, length) == 0) {
      out = static_cast<Dtype>(i);
      return true;
    }
  }
  return false;
}

}  // namespace st
