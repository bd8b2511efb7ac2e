// libFuzzer target: any bytes, taken as a whole file, must come back as a table or an Error,
// never as a crash, a sanitizer report or a read outside [data, data + size).
#include <cstddef>
#include <cstdint>

#include "header.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  st::Header header;
  st::parseFile(data, size, size, header);
  return 0;
}
