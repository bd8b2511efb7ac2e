// Helpers shared by the Catch2 suites: building files from a header string and a data size.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace st_test {

// 8-byte little-endian length, the header text, then `dataBytes` bytes of 0xAB.
inline std::vector<uint8_t> makeFile(const std::string& header, uint64_t dataBytes = 0) {
  std::vector<uint8_t> out(8);
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<uint8_t>(n >> (8 * i));
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), static_cast<size_t>(dataBytes), 0xAB);
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
