// The surface the JS layer calls, in plain types that cross the Embind boundary cheaply:
// pointers into the wasm heap as uintptr_t, 64-bit sizes as double (JS Numbers; the JS side
// checks Number.isSafeInteger before passing them), results as pointers to tables whose
// layout is fixed below, so JS reads 10,000 tensors without 10,000 calls.
//
// Memory: a ParsedFile owns its tables; pointers it returns stay valid until the next call
// that changes it or until it is deleted. Every buffer passed in is owned by the caller.
#pragma once
#include <cstdint>
#include <string>
#include <utility>

#include "awkward.hpp"
#include "header.hpp"
#include "slice.hpp"
#include "stats.hpp"
#include "writer.hpp"

namespace st {

// What JS turns into a SafetensorsError (js/errors.js fromCoreError): a JSON object with
// code (the reference's variant name, "Ok" when there was no error), tensor, message, offset.
std::string errorJson(const Error& e);

// The heap layouts JS reads and writes: sizes and field offsets of the structs, the positions in
// the records below, the element sizes of the arrays that cross, as JSON,
// {"values":[...],"dtypes":[...]}: the values of the named entries of kLayout (api.cpp) in its
// order, and the Dtype names in enum order. js/core/index.js sets the same numbers down in its
// LAYOUT, the one place in js/ that knows them; tests/js/core-layout.test.js compares the two.
std::string layoutJson();

// The words of ParsedFile::tables(), by position.
enum TablesWord : uint32_t {
  kTablesTensors,
  kTablesCount,
  kTablesStrings,
  kTablesStringsLength,
  kTablesDims,
  kTablesHasMetadata,
  kTablesMetadata,
  kTablesMetadataCount,
  kTablesByName,
  kTablesWords,
};

// The doubles StatsStream writes, by position; the histogram's bin counts follow.
enum StatsField : uint32_t {
  kStatsCount,
  kStatsFiniteCount,
  kStatsNanCount,
  kStatsInfCount,
  kStatsZeroCount,
  kStatsMin,
  kStatsMax,
  kStatsMean,
  kStatsStd,
  kStatsHistogramMin,
  kStatsHistogramMax,
  kStatsFields,
};

// The doubles of one range in SlicePlanner::ranges(), by position.
enum RangeWord : uint32_t { kRangeOffset, kRangeLength, kRangeWords };

class ParsedFile {
 public:
  // Rules 1-3: the first `available` bytes at `prefix`. Returns N, or -1 with error() set.
  double readHeaderLength(uintptr_t prefix, uint32_t available, double fileLength);
  // Rules 4-10 over the N header bytes at `json`. False with error() set.
  bool parse(uintptr_t json, uint32_t length, double fileLength);
  std::string error() const { return errorJson(error_); }

  // After a successful parse, where JS finds the header (js/core/), one call for all of it:
  // kTablesWords uintptr_t words (uint32 in wasm32) at the returned address, valid until the
  // next parse or the delete (positions: TablesWord, in this order):
  //   0 tensor table: TensorInfo[count] in file order (layout: layoutJson)
  //   1 count
  //   2 strings: names, metadata keys and values, as UTF-8 bytes
  //   3 strings' length
  //   4 dims: uint64 each, a tensor's at its dimsOffset
  //   5 1 when the header has __metadata__, else 0
  //   6 metadata table: MetadataEntry[metadata count], four uint32 each (key offset, key length,
  //     value offset, value length) into the strings
  //   7 metadata count
  //   8 byName: uint32[count], the tensors' positions in the table sorted by name bytes
  uintptr_t tables();

 private:
  Header header_;
  Error error_;
  uintptr_t tables_[kTablesWords] = {};
};

// Decodes `elements` of dtype (the Dtype enum value) at src into floats at dst (see
// convert.hpp for how many). False for dtypes without a float32 form.
bool toFloat32At(uint32_t dtype, uintptr_t src, double elements, uintptr_t dst);

// Casts n float32 at src to BF16 (toBf16) or F16 at dst, round to nearest even.
void float32ToHalfAt(bool toBf16, uintptr_t src, double n, uintptr_t dst);

// Stats of a tensor (Tensor.stats) or of one streamed in pieces (f.stats; st::StatsAccumulator):
// start, add each piece in order, finish into kStatsFields + bins doubles at out: count,
// finiteCount, nanCount, infCount, zeroCount, min, max, mean, std, histogramMin, histogramMax
// (positions: StatsField), then the bin counts. `elements`, the tensor's count when known
// (else Infinity), picks one pass with a code table or two without (StatsAccumulator). When
// finish returns false the histogram's counts are still zero: add each piece again with
// addHistogram, then finishHistogram writes the complete result.
class StatsStream {
 public:
  bool start(uint32_t dtype, uint32_t bins, double elements);  // false for F6 or an unknown dtype
  void add(uintptr_t data, double elements) {
    acc_.add(reinterpret_cast<const uint8_t*>(data), static_cast<uint64_t>(elements));
  }
  bool finish(uintptr_t out);
  void addHistogram(uintptr_t data, double elements) {
    acc_.addHistogram(reinterpret_cast<const uint8_t*>(data), static_cast<uint64_t>(elements));
  }
  void finishHistogram(uintptr_t out);

 private:
  StatsAccumulator acc_;
  uint32_t bins_ = 0;
};

// Plans the byte ranges of a slice of one tensor of a validated file, described by its name,
// dtype, shape (rank uint64 at dims) and the absolute file offset of its first byte.
class SlicePlanner {
 public:
  bool plan(std::string name, uint32_t dtype, uintptr_t dims, uint32_t rank, double absoluteBegin,
            std::string spec);
  std::string error() const { return errorJson(error_); }
  uint32_t rank() const { return static_cast<uint32_t>(plan_.shape.size()); }
  uintptr_t shape() const {
    return reinterpret_cast<uintptr_t>(plan_.shape.data());
  }  // uint64[rank]
  double byteLength() const { return static_cast<double>(plan_.byteLength); }
  uint32_t rangeCount() const { return static_cast<uint32_t>(ranges_.size() / kRangeWords); }
  // double[kRangeWords * rangeCount]: absolute offset and length of each range (positions:
  // RangeWord), in output order.
  uintptr_t ranges() const { return reinterpret_cast<uintptr_t>(ranges_.data()); }

 private:
  SlicePlan plan_;
  std::vector<double> ranges_;
  Error error_;
};

// Plans a file from flat arrays (see FlatWriteInput in writer.hpp).
class WritePlanner {
 public:
  bool plan(uint32_t tensorCount, uintptr_t names, uintptr_t nameLengths, uintptr_t dtypes,
            uintptr_t ranks, uintptr_t dims, uintptr_t byteLengths, bool hasMetadata,
            uint32_t metadataCount, uintptr_t metadataStrings, uintptr_t metadataLengths);
  std::string error() const { return errorJson(error_); }
  uintptr_t header() const { return reinterpret_cast<uintptr_t>(plan_.header.data()); }
  uint32_t headerLength() const { return static_cast<uint32_t>(plan_.header.size()); }
  uintptr_t order() const {
    return reinterpret_cast<uintptr_t>(plan_.order.data());
  }  // uint32[count]
  double fileLength() const { return static_cast<double>(plan_.fileLength); }

 private:
  WritePlan plan_;
  Error error_;
};

// ---- Awkward arrays: awkward.hpp's three steps for JS (js/awkward/). ----
// parse, then bindBuffer for each of bufferCount() buffers that the file has, then check; the
// check* methods validate buffer elements JS has read into the heap (`first` is the position
// of the element at the pointer). Each returns false with error() set.
class AwkwardReader {
 public:
  bool parse(std::string form, std::string length);
  uint32_t bufferCount() const { return static_cast<uint32_t>(form_.buffers.size()); }
  std::string bufferName(uint32_t i) const {
    return i < form_.buffers.size() ? form_.buffers[i].name : std::string();
  }
  // The file's tensor named bufferName(i): its dtype (the Dtype enum value), element count
  // and absolute byte offset. Buffers never bound are missing.
  void bindBuffer(uint32_t i, uint32_t dtype, double elements, double byteOffset);
  bool check();
  std::string tree() const { return akFormTreeJson(form_); }  // see akFormTreeJson
  std::string error() const { return errorJson(error_); }
  bool checkOffsets(uint32_t node, uintptr_t offsets, double first, double count);
  bool checkLists(uint32_t node, uintptr_t starts, uintptr_t stops, double first, double count);
  bool checkIndex(uint32_t node, uintptr_t index, double first, double count);
  bool checkUnion(uint32_t node, uintptr_t tags, uintptr_t index, double first, double count);

 private:
  bool done(Error e) {
    error_ = std::move(e);
    return !error_;
  }
  AkForm form_;
  Error error_;
};

}  // namespace st
