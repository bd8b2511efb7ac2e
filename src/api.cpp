#include "api.hpp"

#include <array>
#include <cstddef>
#include <utility>

#include "convert.hpp"
#include "json_text.hpp"
#include "stats.hpp"

namespace st {

std::string errorJson(const Error& e) {
  std::string out = "{\"code\":\"";
  out += errorCodeName(e.code);
  out += "\",\"tensor\":";
  appendJsonString(out, e.tensor);
  out += ",\"message\":";
  appendJsonString(out, e.message);
  out += ",\"offset\":";
  out += decimal(e.offset);
  out += '}';
  return out;
}

namespace {

template <class T>
constexpr uint32_t elementSize(const T*) {
  return sizeof(T);
}

struct LayoutEntry {
  const char* name;
  uint32_t value;
};

constexpr FlatWriteInput kFlatWriteInput{};

// What layoutJson reports, in this order. tests/js/core-layout.test.js reads the names from here
// (one entry a {"name", value} pair) and compares each with LAYOUT in js/core/index.js.
constexpr LayoutEntry kLayout[] = {
    {"pointer", sizeof(uintptr_t)},
    {"TensorInfo.size", sizeof(TensorInfo)},
    {"TensorInfo.begin", offsetof(TensorInfo, begin)},
    {"TensorInfo.end", offsetof(TensorInfo, end)},
    {"TensorInfo.offsetSize", sizeof(TensorInfo::begin)},
    {"TensorInfo.name", offsetof(TensorInfo, name)},
    {"TensorInfo.dimsOffset", offsetof(TensorInfo, dimsOffset)},
    {"TensorInfo.rank", offsetof(TensorInfo, rank)},
    {"TensorInfo.dtype", offsetof(TensorInfo, dtype)},
    {"TensorInfo.dtypeSize", sizeof(TensorInfo::dtype)},
    {"StringRef.size", sizeof(StringRef)},
    {"StringRef.offset", offsetof(StringRef, offset)},
    {"StringRef.length", offsetof(StringRef, length)},
    {"MetadataEntry.size", sizeof(MetadataEntry)},
    {"MetadataEntry.key", offsetof(MetadataEntry, key)},
    {"MetadataEntry.value", offsetof(MetadataEntry, value)},
    {"tables.words", kTablesWords},
    {"tables.tensors", kTablesTensors},
    {"tables.count", kTablesCount},
    {"tables.strings", kTablesStrings},
    {"tables.stringsLength", kTablesStringsLength},
    {"tables.dims", kTablesDims},
    {"tables.hasMetadata", kTablesHasMetadata},
    {"tables.metadata", kTablesMetadata},
    {"tables.metadataCount", kTablesMetadataCount},
    {"tables.byName", kTablesByName},
    {"tables.dim", sizeof(decltype(Header::dims)::value_type)},
    {"stats.fields", kStatsFields},
    {"stats.value", sizeof(double)},
    {"stats.count", kStatsCount},
    {"stats.finiteCount", kStatsFiniteCount},
    {"stats.nanCount", kStatsNanCount},
    {"stats.infCount", kStatsInfCount},
    {"stats.zeroCount", kStatsZeroCount},
    {"stats.min", kStatsMin},
    {"stats.max", kStatsMax},
    {"stats.mean", kStatsMean},
    {"stats.std", kStatsStd},
    {"stats.histogramMin", kStatsHistogramMin},
    {"stats.histogramMax", kStatsHistogramMax},
    {"slice.dim", sizeof(uint64_t)},  // SlicePlanner::plan's dims
    {"slice.shape", sizeof(decltype(SlicePlan::shape)::value_type)},
    {"slice.rangeWords", kRangeWords},
    {"slice.rangeOffset", kRangeOffset},
    {"slice.rangeLength", kRangeLength},
    {"slice.rangeValue", sizeof(double)},
    {"write.nameLength", elementSize(kFlatWriteInput.nameLengths)},
    {"write.dtype", elementSize(kFlatWriteInput.dtypes)},
    {"write.rank", elementSize(kFlatWriteInput.ranks)},
    {"write.dim", elementSize(kFlatWriteInput.dims)},
    {"write.byteLength", elementSize(kFlatWriteInput.byteLengths)},
    {"write.metadataLength", elementSize(kFlatWriteInput.metadataLengths)},
    {"write.order", sizeof(decltype(WritePlan::order)::value_type)},
};

// The values of kLayout as JSON text, "[4,40,...]" (or only its length, given no buffer), made
// at compile time: the module carries the numbers alone. The names stay out of it (they would
// cost every page about 0.4 KB gzipped); the layout test reads them from the table above.
constexpr size_t writeLayoutValues(char* out) {
  size_t n = 0;
  const auto put = [&](char c) {
    if (out) out[n] = c;
    ++n;
  };
  for (const LayoutEntry& e : kLayout) {
    put(n == 0 ? '[' : ',');
    char digits[10] = {};
    int k = 0;
    uint32_t v = e.value;
    do {
      digits[k++] = static_cast<char>('0' + v % 10);
      v /= 10;
    } while (v);
    while (k > 0) put(digits[--k]);
  }
  put(']');
  return n;
}

constexpr size_t kLayoutLength = writeLayoutValues(nullptr);
constexpr std::array<char, kLayoutLength> kLayoutValues = [] {
  std::array<char, kLayoutLength> text{};
  writeLayoutValues(text.data());
  return text;
}();

}  // namespace

std::string layoutJson() {
  std::string out = "{\"values\":";
  out.append(kLayoutValues.data(), kLayoutValues.size());
  out += ",\"dtypes\":[";
  for (int i = 0; i < kDtypeCount; ++i) {
    if (i > 0) out += ',';
    appendJsonString(out, dtypeName(static_cast<Dtype>(i)));
  }
  out += "]}";
  return out;
}

double ParsedFile::readHeaderLength(uintptr_t prefix, uint32_t available, double fileLength) {
  uint64_t n = 0;
  error_ = st::readHeaderLength(reinterpret_cast<const uint8_t*>(prefix), available,
                                static_cast<uint64_t>(fileLength), n);
  return error_ ? -1 : static_cast<double>(n);
}

bool ParsedFile::parse(uintptr_t json, uint32_t length, double fileLength) {
  error_ = parseHeader(reinterpret_cast<const uint8_t*>(json), length,
                       static_cast<uint64_t>(fileLength), header_);
  if (error_) header_ = Header{};
  return !error_;
}

uintptr_t ParsedFile::tables() {
  const auto address = [](const void* p) { return reinterpret_cast<uintptr_t>(p); };
  tables_[kTablesTensors] = address(header_.tensors.data());
  tables_[kTablesCount] = header_.tensors.size();
  tables_[kTablesStrings] = address(header_.strings.data());
  tables_[kTablesStringsLength] = header_.strings.size();
  tables_[kTablesDims] = address(header_.dims.data());
  tables_[kTablesHasMetadata] = header_.hasMetadata ? 1u : 0u;
  tables_[kTablesMetadata] = address(header_.metadata.data());
  tables_[kTablesMetadataCount] = header_.metadata.size();
  tables_[kTablesByName] = address(header_.byName.data());
  return reinterpret_cast<uintptr_t>(tables_);
}

bool toFloat32At(uint32_t dtype, uintptr_t src, double elements, uintptr_t dst) {
  if (dtype >= kDtypeCount) return false;
  return toFloat32(static_cast<Dtype>(dtype), reinterpret_cast<const uint8_t*>(src),
                   static_cast<uint64_t>(elements), reinterpret_cast<float*>(dst));
}

void float32ToHalfAt(bool toBf16, uintptr_t src, double n, uintptr_t dst) {
  const float* in = reinterpret_cast<const float*>(src);
  uint16_t* out = reinterpret_cast<uint16_t*>(dst);
  if (toBf16)
    float32ToBf16(in, static_cast<uint64_t>(n), out);
  else
    float32ToF16(in, static_cast<uint64_t>(n), out);
}

namespace {

void writeStats(const Stats& s, uint32_t bins, uintptr_t out) {
  double* o = reinterpret_cast<double*>(out);
  o[kStatsCount] = double(s.count);
  o[kStatsFiniteCount] = double(s.finiteCount);
  o[kStatsNanCount] = double(s.nanCount);
  o[kStatsInfCount] = double(s.infCount);
  o[kStatsZeroCount] = double(s.zeroCount);
  o[kStatsMin] = s.min;
  o[kStatsMax] = s.max;
  o[kStatsMean] = s.mean;
  o[kStatsStd] = s.std;
  o[kStatsHistogramMin] = s.histogramMin;
  o[kStatsHistogramMax] = s.histogramMax;
  for (uint32_t i = 0; i < bins; ++i) o[kStatsFields + i] = double(s.histogram[i]);
}

}  // namespace

bool StatsStream::start(uint32_t dtype, uint32_t bins, double elements) {
  bins_ = bins;
  if (dtype >= kDtypeCount) return false;
  const Dtype d = static_cast<Dtype>(dtype);
  return acc_.start(d, bins, StatsAccumulator::codesPayOff(d, elements));
}

bool StatsStream::finish(uintptr_t out) {
  Stats s;
  const bool complete = acc_.finish(s);
  writeStats(s, bins_, out);
  return complete;
}

void StatsStream::finishHistogram(uintptr_t out) {
  Stats s;
  acc_.finishHistogram(s);
  writeStats(s, bins_, out);
}

bool SlicePlanner::plan(std::string name, uint32_t dtype, uintptr_t dims, uint32_t rank,
                        double absoluteBegin, std::string spec) {
  ranges_.clear();
  if (dtype >= kDtypeCount) {
    error_ = makeError(ErrorCode::InvalidSlice, 0, "unknown dtype index " + decimal(dtype));
    return false;
  }
  // A one-tensor table whose data starts at absoluteBegin, so offsets come out absolute. The
  // tensor comes from a validated header: its byte length cannot overflow.
  Header header;
  const uint64_t* shape = reinterpret_cast<const uint64_t*>(dims);
  header.dims.assign(shape, shape + rank);
  header.strings = std::move(name);
  header.headerLength = static_cast<uint64_t>(absoluteBegin) - 8;
  TensorInfo tensor;
  tensor.dtype = static_cast<Dtype>(dtype);
  tensor.rank = rank;
  tensor.name = {0, static_cast<uint32_t>(header.strings.size())};
  tensor.end = header.elementCount(tensor) * dtypeBits(tensor.dtype) / 8;
  std::vector<SliceIndexer> indexers;
  error_ = parseSliceSpec(spec, indexers);
  if (error_) {
    // The spec parser knows no tensor: place its error at the tensor the spec was meant for.
    error_.tensor = header.strings;
    error_.offset = header.dataOffset();
  } else {
    error_ = planSlice(header, tensor, indexers.data(), indexers.size(), plan_);
  }
  if (error_) return false;
  const uint64_t words = uint64_t{plan_.ranges.size()} * kRangeWords;
  if (!heapHolds(words * sizeof(double))) {  // the plan's ranges again, as doubles for JS
    error_ = makeError(ErrorCode::OutOfMemory, header.dataOffset(),
                       "the slice's " + decimal(plan_.ranges.size()) + " byte ranges need " +
                           decimal(words * sizeof(double)) +
                           " bytes more than the heap has free: slice fewer rows at once, or "
                           "free tensors no longer needed",
                       header.strings);
    plan_ = {};
    return false;
  }
  ranges_.assign(plan_.ranges.size() * kRangeWords, 0);
  for (size_t i = 0; i < plan_.ranges.size(); ++i) {
    const ByteRange& r = plan_.ranges[i];
    ranges_[i * kRangeWords + kRangeOffset] = static_cast<double>(r.begin);
    ranges_[i * kRangeWords + kRangeLength] = static_cast<double>(r.end - r.begin);
  }
  return true;
}

bool WritePlanner::plan(uint32_t tensorCount, uintptr_t names, uintptr_t nameLengths,
                        uintptr_t dtypes, uintptr_t ranks, uintptr_t dims, uintptr_t byteLengths,
                        bool hasMetadata, uint32_t metadataCount, uintptr_t metadataStrings,
                        uintptr_t metadataLengths) {
  FlatWriteInput in;
  in.tensorCount = tensorCount;
  in.names = reinterpret_cast<const char*>(names);
  in.nameLengths = reinterpret_cast<const uint32_t*>(nameLengths);
  in.dtypes = reinterpret_cast<const uint8_t*>(dtypes);
  in.ranks = reinterpret_cast<const uint32_t*>(ranks);
  in.dims = reinterpret_cast<const uint64_t*>(dims);
  in.byteLengths = reinterpret_cast<const uint64_t*>(byteLengths);
  in.hasMetadata = hasMetadata;
  in.metadataCount = metadataCount;
  in.metadataStrings = reinterpret_cast<const char*>(metadataStrings);
  in.metadataLengths = reinterpret_cast<const uint32_t*>(metadataLengths);
  error_ = planWriteFlat(in, plan_);
  return !error_;
}

// ---- Awkward arrays ----

bool AwkwardReader::parse(std::string form, std::string length) {
  return done(parseAkForm(form, length, form_));
}

void AwkwardReader::bindBuffer(uint32_t i, uint32_t dtype, double elements, double byteOffset) {
  if (i >= form_.buffers.size() || dtype >= kDtypeCount) return;
  AkBuffer& b = form_.buffers[i];
  b.found = true;
  b.fileDtype = static_cast<Dtype>(dtype);
  b.elements = static_cast<uint64_t>(elements);
  b.byteOffset = static_cast<uint64_t>(byteOffset);
}

bool AwkwardReader::check() {
  if (form_.nodes.empty())
    return done(makeError(ErrorCode::AwkwardInvalidForm, 0, "awkward: no form was parsed"));
  return done(checkAkBuffers(form_));
}

bool AwkwardReader::checkOffsets(uint32_t node, uintptr_t offsets, double first, double count) {
  return done(checkAkOffsets(form_, node, reinterpret_cast<const void*>(offsets),
                             static_cast<uint64_t>(first), static_cast<uint64_t>(count)));
}

bool AwkwardReader::checkLists(uint32_t node, uintptr_t starts, uintptr_t stops, double first,
                               double count) {
  return done(checkAkLists(form_, node, reinterpret_cast<const void*>(starts),
                           reinterpret_cast<const void*>(stops), static_cast<uint64_t>(first),
                           static_cast<uint64_t>(count)));
}

bool AwkwardReader::checkIndex(uint32_t node, uintptr_t index, double first, double count) {
  return done(checkAkIndex(form_, node, reinterpret_cast<const void*>(index),
                           static_cast<uint64_t>(first), static_cast<uint64_t>(count)));
}

bool AwkwardReader::checkUnion(uint32_t node, uintptr_t tags, uintptr_t index, double first,
                               double count) {
  return done(checkAkUnion(form_, node, reinterpret_cast<const void*>(tags),
                           reinterpret_cast<const void*>(index), static_cast<uint64_t>(first),
                           static_cast<uint64_t>(count)));
}

}  // namespace st
