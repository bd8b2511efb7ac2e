#include "name_order.hpp"

#include <cstring>

#include "merge_sort.hpp"

namespace st {

// 8 bytes at a time: names share long prefixes ("model.layers.12.mlp.experts."), and wasm's
// memcmp goes byte by byte.
bool bytesLess(std::string_view a, std::string_view b) {
  const size_t n = a.size() < b.size() ? a.size() : b.size();
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t x, y;
    std::memcpy(&x, a.data() + i, 8);
    std::memcpy(&y, b.data() + i, 8);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    x = __builtin_bswap64(x);  // so that the first byte is the most significant
    y = __builtin_bswap64(y);
#endif
    if (x != y) return x < y;
  }
  for (; i < n; ++i)
    if (a[i] != b[i]) return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[i]);
  return a.size() < b.size();
}

namespace {

struct NamedIndex {
  std::string_view name;  // copied next to its index so comparisons touch one array
  uint32_t index;
};

}  // namespace

std::vector<uint32_t> orderByName(size_t n, NameOf name, const void* context) {
  std::vector<NamedIndex> keyed(n);
  for (uint32_t i = 0; i < n; ++i) keyed[i] = {name(context, i), i};
  mergeSort(keyed,
            [](const NamedIndex& a, const NamedIndex& b) { return bytesLess(a.name, b.name); });
  std::vector<uint32_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = keyed[i].index;
  return order;
}

bool findRepeat(const std::vector<uint32_t>& order, NameOf name, const void* context,
                std::string_view& repeated) {
  for (size_t i = 1; i < order.size(); ++i) {
    repeated = name(context, order[i]);
    if (repeated == name(context, order[i - 1])) return true;
  }
  return false;
}

}  // namespace st
