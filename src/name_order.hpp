// Byte-wise name order, shared by the reader (lookup by name, duplicate check) and the writer
// (the reference writes names in sorted order).
#pragma once
#include <cstdint>
#include <string_view>
#include <vector>

namespace st {

// a < b byte-wise, as std::string_view compares (unsigned bytes, a prefix first).
bool bytesLess(std::string_view a, std::string_view b);

// The name of item i of a table (tensors, metadata entries) that `context` points to.
using NameOf = std::string_view (*)(const void* context, uint32_t i);

// The indices 0..n-1 ordered by name(context, i), byte-wise; equal names keep index order.
std::vector<uint32_t> orderByName(size_t n, NameOf name, const void* context);

// Whether `order` (as orderByName gives it) holds a name twice; if so, that name in `repeated`
// (the first such, in name order).
bool findRepeat(const std::vector<uint32_t>& order, NameOf name, const void* context,
                std::string_view& repeated);

}  // namespace st
