// The sharded-index module, dist/safetensors_index.mjs: st::IndexParser for js/core/index-map.js.
// A wasm module of its own, loaded when a sharded set is first opened, because in the core it
// would add about 9 KB gzipped to every page (docs/design.md, "Size budget"). Plain C exports
// over handles rather than Embind, whose JS runtime would outweigh the parser: addresses and
// handles cross as i32 (JS reads them >>> 0), an error as the address of its JSON text
// (st::errorJson), NUL-terminated, which JS frees.
#include <emscripten/emmalloc.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "index_map.hpp"

using st::IndexParser;

namespace {

IndexParser* parser(uintptr_t handle) { return reinterpret_cast<IndexParser*>(handle); }

// The positions and sizes js/core/index-map.js reads (its LAYOUT, in this order; the test
// tests/js/index-map.test.js compares the two).
const uint32_t kLayout[] = {
    sizeof(uintptr_t),     st::kIndexWords,      st::kIndexCount,
    st::kIndexShardCount,  st::kIndexShards,     st::kIndexPaths,
    st::kIndexPathsLength, st::kIndexMetadata,   st::kIndexMetadataLength,
    st::kIndexNamesLength, st::kIndexBytesInUse, st::kShardWords,
    st::kShardPathOffset,  st::kShardPathLength, st::kShardFirstName,
    st::kShardNameCount,   st::kShardId,         sizeof(uint32_t),
};

}  // namespace

extern "C" {

uintptr_t indexParserNew() { return reinterpret_cast<uintptr_t>(new IndexParser()); }
void indexParserDelete(uintptr_t handle) { delete parser(handle); }
bool indexParserFeed(uintptr_t handle, uintptr_t data, uint32_t n) {
  return parser(handle)->feedAt(data, n);
}
bool indexParserFinish(uintptr_t handle) { return parser(handle)->finish(); }
char* indexParserError(uintptr_t handle) {
  const std::string text = parser(handle)->errorText();
  char* out = static_cast<char*>(std::malloc(text.size() + 1));
  if (out) std::memcpy(out, text.c_str(), text.size() + 1);
  return out;
}
// Heap bytes the parser holds so far (IndexParser::bytesInUse), for JS's reservations.
double indexParserBytesInUse(uintptr_t handle) { return double(parser(handle)->bytesInUse()); }
uintptr_t indexParserTables(uintptr_t handle) { return parser(handle)->tables(); }
void indexParserNames(uintptr_t handle, uintptr_t blob, uintptr_t ends) {
  parser(handle)->namesAt(blob, ends);
}
int32_t indexParserShardOf(uintptr_t handle, uintptr_t name, uint32_t n) {
  return parser(handle)->shardOfAt(name, n);
}
const uint32_t* indexLayout() { return kLayout; }
uint32_t indexLayoutLength() { return sizeof kLayout / sizeof kLayout[0]; }
// Bytes the allocator has handed out and not taken back, for tests and benchmarks.
double heapInUse() { return double(emmalloc_dynamic_heap_size() - emmalloc_free_dynamic_memory()); }
}
