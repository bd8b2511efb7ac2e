// Byte-wise name order, shared by the reader (lookup by name, duplicate check) and the writer
// (the reference writes names in sorted order).
#pragma once
#include <cstdint>
#include <string_view>
#include <vector>

namespace st {

// a < b byte-wise, as std::string_view compares (unsigned bytes, a prefix first).
bool bytesLess(std::string_view a, std::string_view b);

// The indices 0..n-1 ordered by name(context, i), byte-wise; equal names keep index order.
std::vector<uint32_t> orderByName(size_t n, std::string_view (*name)(const void* context, uint32_t i),
                                  const void* context);

}  // namespace st
