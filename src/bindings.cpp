// All Embind code lives here; every binding forwards to the core in one line.
#include <emscripten/bind.h>
#include <emscripten/emmalloc.h>

#include <cstddef>
#include <cstring>

#include "api.hpp"

using namespace emscripten;

// JS reads these tables straight from the heap (js/table.js): keep the two in step.
static_assert(sizeof(st::TensorInfo) == 40, "TensorInfo is 10 uint32 words");
static_assert(offsetof(st::TensorInfo, begin) == 0 && offsetof(st::TensorInfo, end) == 8,
              "begin/end: words 0-3 (lo, hi)");
static_assert(offsetof(st::TensorInfo, name) == 16, "name offset/length: words 4-5");
static_assert(offsetof(st::TensorInfo, dimsOffset) == 24 && offsetof(st::TensorInfo, rank) == 28,
              "dimsOffset, rank: words 6-7");
static_assert(offsetof(st::TensorInfo, dtype) == 32, "dtype: low byte of word 8");
static_assert(sizeof(st::MetadataEntry) == 16, "MetadataEntry is 4 uint32 words");

EMSCRIPTEN_BINDINGS(safetensors_core) {
  value_object<st::ErrorInfo>("ErrorInfo")
      .field("code", &st::ErrorInfo::code)
      .field("tensor", &st::ErrorInfo::tensor)
      .field("message", &st::ErrorInfo::message)
      .field("offset", &st::ErrorInfo::offset);

  class_<st::ParsedFile>("ParsedFile")
      .constructor<>()
      .function("readHeaderLength", &st::ParsedFile::readHeaderLength)
      .function("parse", &st::ParsedFile::parse)
      .function("error", &st::ParsedFile::error)
      .function("headerLength", &st::ParsedFile::headerLength)
      .function("tensorCount", &st::ParsedFile::tensorCount)
      .function("tensorTable", &st::ParsedFile::tensorTable)
      .function("strings", &st::ParsedFile::strings)
      .function("stringsLength", &st::ParsedFile::stringsLength)
      .function("dims", &st::ParsedFile::dims)
      .function("hasMetadata", &st::ParsedFile::hasMetadata)
      .function("metadataCount", &st::ParsedFile::metadataCount)
      .function("metadataTable", &st::ParsedFile::metadataTable);

  // Bytes the allocator has handed out and not taken back: the tests' leak check.
  function("heapInUse", +[]() -> double {
    return double(emmalloc_dynamic_heap_size() - emmalloc_free_dynamic_memory());
  });

  // The wasm memcpy that bench/convert.js measures the conversions against.
  function("copyBytes", +[](uintptr_t dst, uintptr_t src, double n) {
    std::memcpy(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), static_cast<size_t>(n));
  });

  function("toFloat32", &st::toFloat32At);
  function("float32ToHalf", &st::float32ToHalfAt);
  function("statsInto", &st::statsInto);

  class_<st::SlicePlanner>("SlicePlanner")
      .constructor<>()
      .function("plan", &st::SlicePlanner::plan)
      .function("error", &st::SlicePlanner::error)
      .function("rank", &st::SlicePlanner::rank)
      .function("shape", &st::SlicePlanner::shape)
      .function("byteLength", &st::SlicePlanner::byteLength)
      .function("rangeCount", &st::SlicePlanner::rangeCount)
      .function("ranges", &st::SlicePlanner::ranges);

  class_<st::WritePlanner>("WritePlanner")
      .constructor<>()
      .function("plan", &st::WritePlanner::plan)
      .function("error", &st::WritePlanner::error)
      .function("header", &st::WritePlanner::header)
      .function("headerLength", &st::WritePlanner::headerLength)
      .function("order", &st::WritePlanner::order)
      .function("fileLength", &st::WritePlanner::fileLength);

  // ---- Awkward arrays (issue 6): see AwkwardReader in api.hpp ----
  class_<st::AwkwardReader>("AwkwardReader")
      .constructor<>()
      .function("parse", &st::AwkwardReader::parse)
      .function("bufferCount", &st::AwkwardReader::bufferCount)
      .function("bufferName", &st::AwkwardReader::bufferName)
      .function("bindBuffer", &st::AwkwardReader::bindBuffer)
      .function("check", &st::AwkwardReader::check)
      .function("tree", &st::AwkwardReader::tree)
      .function("error", &st::AwkwardReader::error)
      .function("checkOffsets", &st::AwkwardReader::checkOffsets)
      .function("checkLists", &st::AwkwardReader::checkLists)
      .function("checkIndex", &st::AwkwardReader::checkIndex)
      .function("checkUnion", &st::AwkwardReader::checkUnion);
}
