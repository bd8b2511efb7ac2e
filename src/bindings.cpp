// All Embind code lives here; every binding forwards to the core in one line.
//
// Only free functions over numbers and strings cross: an object the core owns (ParsedFile,
// SlicePlanner, WritePlanner, AwkwardReader) crosses as its address, a handle that JS frees
// with the matching ...Delete; errors cross as JSON text (st::errorJson). Embind's class_ and
// value_object would add generated JS and wasm to every page (bench/size.js measures it) for
// object wrappers that js/ has its own of anyway (docs/design.md, "Embind: free functions over
// handles").
#include <emscripten/bind.h>
#include <emscripten/emmalloc.h>

#include <cstddef>
#include <cstring>

#include "api.hpp"

using namespace emscripten;

// JS reads the core's tables straight from the heap, and only js/core/ knows how they are laid
// out: `layout` reports the layouts (st::layoutJson), and tests/js/core-layout.test.js checks
// the LAYOUT of js/core/index.js against them. Addresses cross as uint32 Numbers.
static_assert(sizeof(uintptr_t) == 4, "wasm32: addresses and ParsedFile::tables words are uint32");

namespace {

template <class T>
uintptr_t create() {
  return reinterpret_cast<uintptr_t>(new T());
}

template <class T>
void destroy(uintptr_t handle) {
  delete reinterpret_cast<T*>(handle);
}

// Method<&T::m>::call(handle, args...) calls m on the object at handle.
template <auto method>
struct Method;
template <class T, class R, class... Args, R (T::*method)(Args...)>
struct Method<method> {
  static R call(uintptr_t handle, Args... args) {
    return (reinterpret_cast<T*>(handle)->*method)(args...);
  }
};
template <class T, class R, class... Args, R (T::*method)(Args...) const>
struct Method<method> {
  static R call(uintptr_t handle, Args... args) {
    return (reinterpret_cast<const T*>(handle)->*method)(args...);
  }
};

template <auto method>
void bindMethod(const char* name) {
  function(name, &Method<method>::call);
}

template <class T>
void bindLifetime(const char* createName, const char* deleteName) {
  function(createName, &create<T>);
  function(deleteName, &destroy<T>);
}

}  // namespace

EMSCRIPTEN_BINDINGS(safetensors_core) {
  using st::ParsedFile;
  bindLifetime<ParsedFile>("parsedFileNew", "parsedFileDelete");
  bindMethod<&ParsedFile::readHeaderLength>("parsedFileReadHeaderLength");
  bindMethod<&ParsedFile::parse>("parsedFileParse");
  bindMethod<&ParsedFile::error>("parsedFileError");
  bindMethod<&ParsedFile::tables>("parsedFileTables");

  // Diagnostics, not API (js/ exports none of them): the heap layouts js/core/ reads and writes,
  // for its test; the bytes the heap holds, for the tests' leak checks and OutOfMemory's
  // message; a wasm memcpy, the baseline bench/convert.js measures conversions against.
  function("layout", &st::layoutJson);

  // Bytes the allocator has handed out and not taken back.
  function(
      "heapInUse", +[]() -> double {
        return double(emmalloc_dynamic_heap_size() - emmalloc_free_dynamic_memory());
      });

  // The wasm memcpy of bench/convert.js.
  function(
      "copyBytes", +[](uintptr_t dst, uintptr_t src, double n) {
        std::memcpy(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src),
                    static_cast<size_t>(n));
      });

  function("toFloat32", &st::toFloat32At);
  function("float32ToHalf", &st::float32ToHalfAt);

  // Stats of a tensor streamed in pieces (f.stats): see StatsStream in api.hpp.
  using st::StatsStream;
  bindLifetime<StatsStream>("statsStreamNew", "statsStreamDelete");
  bindMethod<&StatsStream::start>("statsStreamStart");
  bindMethod<&StatsStream::add>("statsStreamAdd");
  bindMethod<&StatsStream::finish>("statsStreamFinish");
  bindMethod<&StatsStream::addHistogram>("statsStreamAddHistogram");
  bindMethod<&StatsStream::finishHistogram>("statsStreamFinishHistogram");

  using st::SlicePlanner;
  bindLifetime<SlicePlanner>("slicePlannerNew", "slicePlannerDelete");
  bindMethod<&SlicePlanner::plan>("slicePlannerPlan");
  bindMethod<&SlicePlanner::error>("slicePlannerError");
  bindMethod<&SlicePlanner::rank>("slicePlannerRank");
  bindMethod<&SlicePlanner::shape>("slicePlannerShape");
  bindMethod<&SlicePlanner::byteLength>("slicePlannerByteLength");
  bindMethod<&SlicePlanner::rangeCount>("slicePlannerRangeCount");
  bindMethod<&SlicePlanner::ranges>("slicePlannerRanges");

  using st::WritePlanner;
  bindLifetime<WritePlanner>("writePlannerNew", "writePlannerDelete");
  bindMethod<&WritePlanner::plan>("writePlannerPlan");
  bindMethod<&WritePlanner::error>("writePlannerError");
  bindMethod<&WritePlanner::header>("writePlannerHeader");
  bindMethod<&WritePlanner::headerLength>("writePlannerHeaderLength");
  bindMethod<&WritePlanner::order>("writePlannerOrder");
  bindMethod<&WritePlanner::fileLength>("writePlannerFileLength");

  // ---- Awkward arrays: see AwkwardReader in api.hpp ----
  using st::AwkwardReader;
  bindLifetime<AwkwardReader>("awkwardReaderNew", "awkwardReaderDelete");
  bindMethod<&AwkwardReader::parse>("awkwardReaderParse");
  bindMethod<&AwkwardReader::bufferCount>("awkwardReaderBufferCount");
  bindMethod<&AwkwardReader::bufferName>("awkwardReaderBufferName");
  bindMethod<&AwkwardReader::bindBuffer>("awkwardReaderBindBuffer");
  bindMethod<&AwkwardReader::check>("awkwardReaderCheck");
  bindMethod<&AwkwardReader::tree>("awkwardReaderTree");
  bindMethod<&AwkwardReader::error>("awkwardReaderError");
  bindMethod<&AwkwardReader::checkOffsets>("awkwardReaderCheckOffsets");
  bindMethod<&AwkwardReader::checkLists>("awkwardReaderCheckLists");
  bindMethod<&AwkwardReader::checkIndex>("awkwardReaderCheckIndex");
  bindMethod<&AwkwardReader::checkUnion>("awkwardReaderCheckUnion");
}
