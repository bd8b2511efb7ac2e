// Helpers shared by the Catch2 suites: building files from a header string and a data size.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace st_test {

// 8-byte little-endian length, the header text, then `dataBytes` bytes of 0xAB.
// Sized once and filled: g++ 12 at -O2 warns falsely (-Wstringop-overread) about the
// vector::insert of the header into an 8-byte vector.
inline std::vector<uint8_t> makeFile(const std::string& header, uint64_t dataBytes = 0) {
  std::vector<uint8_t> out(8 + header.size() + static_cast<size_t>(dataBytes), 0xAB);
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<uint8_t>(n >> (8 * i));
  std::copy(header.begin(), header.end(), out.begin() + 8);
  return out;
}

inline std::string readFileBytes(const std::string& path, bool& ok) {
  std::string data;
  FILE* f = std::fopen(path.c_str(), "rb");
  ok = f != nullptr;
  if (!f) return data;
  char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) data.append(buf, n);
  std::fclose(f);
  return data;
}

}  // namespace st_test
