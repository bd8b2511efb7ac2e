#include <catch.hpp>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "header.hpp"
#include "slice.hpp"
#include "support.hpp"

using namespace st;
using st_test::makeFile;

namespace {

using Ranges = std::vector<std::pair<uint64_t, uint64_t>>;
using Shape = std::vector<uint64_t>;

uint64_t byteSize(Dtype dtype, const Shape& shape) {
  uint64_t n = dtypeBits(dtype);
  for (uint64_t d : shape) n *= d;
  return n / 8;
}

std::string shapeJson(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

// A file holding "pad" (U8, `pad` bytes) then "t", so that t's offsets are not the data start.
std::vector<uint8_t> tensorFile(Dtype dtype, const Shape& shape, uint64_t pad = 3) {
  uint64_t bytes = byteSize(dtype, shape);
  std::string json = R"({"pad":{"dtype":"U8","shape":[)" + std::to_string(pad) +
                     R"(],"data_offsets":[0,)" + std::to_string(pad) + R"(]},"t":{"dtype":")" +
                     dtypeName(dtype) + R"(","shape":)" + shapeJson(shape) +
                     R"(,"data_offsets":[)" + std::to_string(pad) + "," +
                     std::to_string(pad + bytes) + "]}}";
  return makeFile(json, pad + bytes);
}

struct Sliced {
  Header header;
  Error error;
  SlicePlan plan;
  uint64_t start = 0;  // t's first absolute byte
  Ranges ranges;       // plan.ranges relative to start
};

Sliced sliceOf(Dtype dtype, const Shape& shape, const std::string& spec) {
  Sliced s;
  auto file = tensorFile(dtype, shape);
  Error e = parseFile(file.data(), file.size(), file.size(), s.header);
  INFO(e.message);
  REQUIRE(!e);
  std::vector<SliceIndexer> indexers;
  e = parseSliceSpec(spec, indexers);
  INFO(e.message);
  REQUIRE(!e);
  const TensorInfo& t = s.header.tensors[static_cast<size_t>(s.header.find("t"))];
  s.start = s.header.absoluteBegin(t);
  s.error = planSlice(s.header, t, indexers.data(), indexers.size(), s.plan);
  for (const ByteRange& r : s.plan.ranges) s.ranges.push_back({r.begin - s.start, r.end - s.start});
  return s;
}

ErrorCode codeOf(Dtype dtype, const Shape& shape, const std::string& spec) {
  return sliceOf(dtype, shape, spec).error.code;
}

}  // namespace

TEST_CASE("planSlice: no indexers take the whole tensor as one range") {
  Sliced s = sliceOf(Dtype::F32, {4, 3}, "");
  REQUIRE(!s.error);
  CHECK(s.plan.shape == Shape{4, 3});
  CHECK(s.ranges == Ranges{{0, 48}});
  CHECK(s.plan.byteLength == 48);
  CHECK(s.start == 8 + s.header.headerLength + 3);
  CHECK(sliceOf(Dtype::F32, {4, 3}, ":, :").ranges == Ranges{{0, 48}});
  CHECK(sliceOf(Dtype::F32, {4, 3}, "0:4").ranges == Ranges{{0, 48}});
}

TEST_CASE("planSlice: a block of rows is one range") {
  Sliced s = sliceOf(Dtype::F32, {4, 3}, "1:3");
  REQUIRE(!s.error);
  CHECK(s.plan.shape == Shape{2, 3});
  CHECK(s.ranges == Ranges{{12, 36}});
  CHECK(sliceOf(Dtype::F32, {4, 3}, "1:3, :").ranges == Ranges{{12, 36}});
  CHECK(sliceOf(Dtype::U8, {5, 2, 3}, "1:").ranges == Ranges{{6, 30}});
}

TEST_CASE("planSlice: a block of columns is one range per row") {
  Sliced s = sliceOf(Dtype::F32, {4, 3}, ":, 1:3");
  REQUIRE(!s.error);
  CHECK(s.plan.shape == Shape{4, 2});
  CHECK(s.ranges == Ranges{{4, 12}, {16, 24}, {28, 36}, {40, 48}});
  CHECK(s.plan.byteLength == 32);
  CHECK(sliceOf(Dtype::U8, {2, 3, 2}, ":, 1:3, 0:1").ranges ==
        Ranges{{2, 3}, {4, 5}, {8, 9}, {10, 11}});
}

TEST_CASE("planSlice: integer indexers drop their dimension") {
  Sliced s = sliceOf(Dtype::U8, {2, 3, 4}, "1, 2");
  REQUIRE(!s.error);
  CHECK(s.plan.shape == Shape{4});
  CHECK(s.ranges == Ranges{{20, 24}});
  s = sliceOf(Dtype::U8, {2, 3, 4}, "1, :, 3");
  CHECK(s.plan.shape == Shape{3});
  CHECK(s.ranges == Ranges{{15, 16}, {19, 20}, {23, 24}});
  s = sliceOf(Dtype::I16, {2, 3}, "1, 2");
  CHECK(s.plan.shape.empty());
  CHECK(s.ranges == Ranges{{10, 12}});
  // An index on a size-1 dimension is the whole dimension: the rows still merge.
  s = sliceOf(Dtype::U8, {3, 1, 2}, "0:2, 0");
  CHECK(s.plan.shape == Shape{2, 2});
  CHECK(s.ranges == Ranges{{0, 4}});
}

TEST_CASE("planSlice: negative values count from the end") {
  CHECK(sliceOf(Dtype::F32, {4, 3}, "-1").ranges == Ranges{{36, 48}});
  CHECK(sliceOf(Dtype::F32, {4, 3}, "-4").ranges == Ranges{{0, 12}});
  CHECK(sliceOf(Dtype::F32, {4, 3}, ":-1").ranges == Ranges{{0, 36}});
  CHECK(sliceOf(Dtype::F32, {4, 3}, "-3:-1, -1").ranges == Ranges{{20, 24}, {32, 36}});
  CHECK(sliceOf(Dtype::F32, {4, 3}, "-4:0").plan.shape == Shape{0, 3});
  CHECK(codeOf(Dtype::F32, {4, 3}, "-5") == ErrorCode::SliceOutOfRange);
  CHECK(codeOf(Dtype::F32, {4, 3}, "-5:") == ErrorCode::SliceOutOfRange);
  CHECK(codeOf(Dtype::F32, {4, 3}, ":-5") == ErrorCode::SliceOutOfRange);
  CHECK(codeOf(Dtype::F32, {4, 3}, "-9223372036854775808") == ErrorCode::SliceOutOfRange);
  CHECK(codeOf(Dtype::F32, {4, 3}, "-9223372036854775808:") == ErrorCode::SliceOutOfRange);
}

TEST_CASE("planSlice: TooManySlices") {
  Sliced s = sliceOf(Dtype::F32, {4, 3}, "0, 0, 0");
  CHECK(s.error.code == ErrorCode::TooManySlices);
  CHECK(s.error.tensor == "t");
  CHECK(s.error.offset == s.start);
  CHECK(s.error.message == "tensor \"t\" F32 [4, 3]: 3 indexers for 2 dimensions");
}

TEST_CASE("planSlice: SliceOutOfRange") {
  Sliced s = sliceOf(Dtype::F32, {4, 3}, "0, 3");
  CHECK(s.error.code == ErrorCode::SliceOutOfRange);
  CHECK(s.error.tensor == "t");
  CHECK(s.error.offset == s.start);
  CHECK(s.error.message == "tensor \"t\" F32 [4, 3]: index 3 is outside of dimension 1 (size 3)");
  s = sliceOf(Dtype::F32, {4, 3}, "0:5");
  CHECK(s.error.message ==
        "tensor \"t\" F32 [4, 3]: range 0:5: stop 5 is outside of dimension 0 (size 4)");
  s = sliceOf(Dtype::F32, {4, 3}, "5:");
  CHECK(s.error.message ==
        "tensor \"t\" F32 [4, 3]: range 5:: start 5 is outside of dimension 0 (size 4)");
  CHECK(codeOf(Dtype::F32, {4, 3}, "4") == ErrorCode::SliceOutOfRange);
  CHECK(codeOf(Dtype::F32, {4, 3}, "9223372036854775807") == ErrorCode::SliceOutOfRange);
}

TEST_CASE("planSlice: start > stop is InvalidSlice") {
  Sliced s = sliceOf(Dtype::F32, {4, 3}, "3:1");
  CHECK(s.error.code == ErrorCode::InvalidSlice);
  CHECK(s.error.offset == s.start);
  CHECK(s.error.message ==
        "tensor \"t\" F32 [4, 3]: range 3:1 of dimension 0 (size 4) resolves to start 3 > stop 1");
  CHECK(codeOf(Dtype::F32, {4, 3}, "-1:1") == ErrorCode::InvalidSlice);
  CHECK(codeOf(Dtype::F32, {4, 3}, "4:-1") == ErrorCode::InvalidSlice);
}

TEST_CASE("planSlice: empty slices and size-0 dimensions give no ranges") {
  for (const char* spec : {"2:2", "4:4", "4:", ":, 3:", ":, 1:1", "-1:3"}) {
    Sliced s = sliceOf(Dtype::F32, {4, 3}, spec);
    INFO(spec);
    CHECK(!s.error);
    CHECK(s.ranges.empty());
    CHECK(s.plan.byteLength == 0);
  }
  CHECK(sliceOf(Dtype::F32, {4, 3}, "2:2").plan.shape == Shape{0, 3});
  Sliced s = sliceOf(Dtype::U8, {3, 0, 2}, "");
  REQUIRE(!s.error);
  CHECK(s.plan.shape == Shape{3, 0, 2});
  CHECK(s.ranges.empty());
  CHECK(sliceOf(Dtype::U8, {3, 0, 2}, "1").plan.shape == Shape{0, 2});
  CHECK(sliceOf(Dtype::U8, {3, 0, 2}, "1, 0:0, 1").plan.shape == Shape{0});
  CHECK(sliceOf(Dtype::U8, {0}, "0:").plan.shape == Shape{0});
  CHECK(codeOf(Dtype::U8, {3, 0, 2}, "1, 0") == ErrorCode::SliceOutOfRange);
  CHECK(codeOf(Dtype::U8, {0}, "-1") == ErrorCode::SliceOutOfRange);
  // Later dimensions are still checked when an earlier one is empty.
  CHECK(codeOf(Dtype::F32, {4, 3}, "0:0, 5") == ErrorCode::SliceOutOfRange);
  CHECK(codeOf(Dtype::F32, {4, 3}, "0:0, 2:1") == ErrorCode::InvalidSlice);
}

TEST_CASE("planSlice: a scalar takes only the empty spec") {
  Sliced s = sliceOf(Dtype::F64, {}, "");
  REQUIRE(!s.error);
  CHECK(s.plan.shape.empty());
  CHECK(s.ranges == Ranges{{0, 8}});
  CHECK(codeOf(Dtype::F64, {}, "0") == ErrorCode::TooManySlices);
  CHECK(codeOf(Dtype::F64, {}, ":") == ErrorCode::TooManySlices);
  CHECK(sliceOf(Dtype::F64, {}, "0").error.message ==
        "tensor \"t\" F64 []: 1 indexers for 0 dimensions");
}

TEST_CASE("planSlice: sub-byte dtypes must slice on byte boundaries") {
  // F4 [4, 4]: rows are 2 bytes.
  CHECK(sliceOf(Dtype::F4, {4, 4}, "1").ranges == Ranges{{2, 4}});
  CHECK(sliceOf(Dtype::F4, {4, 4}, ":, 2:4").ranges == Ranges{{1, 2}, {3, 4}, {5, 6}, {7, 8}});
  Sliced s = sliceOf(Dtype::F4, {4, 4}, ":, 1:3");
  CHECK(s.error.code == ErrorCode::MisalignedSlice);
  CHECK(s.error.offset == s.start);
  CHECK(s.error.message ==
        "tensor \"t\" F4 [4, 4]: a slice range would begin or end at bit 4 of "
        "the tensor's data, inside byte 0");
  s = sliceOf(Dtype::F4, {4, 4}, "2, 0:1");
  CHECK(s.error.code == ErrorCode::MisalignedSlice);
  CHECK(s.error.offset == s.start + 4);
  CHECK(codeOf(Dtype::F4, {4, 4}, "1, 3") == ErrorCode::MisalignedSlice);
  // F4 [2, 3, 3]: row strides of 12 bits. Each range below is whole bytes although its
  // dimensions' strides are not, so the exact check accepts it.
  s = sliceOf(Dtype::F4, {2, 3, 3}, "0, 1, 1:3");
  REQUIRE(!s.error);
  CHECK(s.ranges == Ranges{{2, 3}});
  // ... but the second copy of it, 36 bits further, is not.
  s = sliceOf(Dtype::F4, {2, 3, 3}, ":, 1, 1:3");
  CHECK(s.error.code == ErrorCode::MisalignedSlice);
  CHECK(s.error.offset == s.start + 6);
  CHECK(codeOf(Dtype::F4, {2, 3, 3}, "1") == ErrorCode::MisalignedSlice);  // 36 bits in
  // F6 [4, 4]: rows are 3 bytes, pairs of elements are not.
  CHECK(sliceOf(Dtype::F6_E2M3, {4, 4}, "2:4").ranges == Ranges{{6, 12}});
  CHECK(sliceOf(Dtype::F6_E3M2, {4, 4}, "-1").ranges == Ranges{{9, 12}});
  CHECK(codeOf(Dtype::F6_E2M3, {4, 4}, ":, 0:2") == ErrorCode::MisalignedSlice);
  CHECK(sliceOf(Dtype::F6_E2M3, {4, 8}, ":, 4:").ranges ==
        Ranges{{3, 6}, {9, 12}, {15, 18}, {21, 24}});
  CHECK(sliceOf(Dtype::F6_E2M3, {4, 4}, ":, 1:1").ranges.empty());
}

TEST_CASE("planSlice: offsets above 4 GiB") {
  const uint64_t five = 5000000000;
  std::string json = R"({"pad":{"dtype":"U8","shape":[5000000000],"data_offsets":[0,5000000000]},)"
                     R"("w":{"dtype":"F32","shape":[4,3],"data_offsets":[5000000000,5000000048]}})";
  auto prefix = makeFile(json);  // only the header: parseFile reads no further
  Header h;
  Error e = parseFile(prefix.data(), prefix.size(), prefix.size() + five + 48, h);
  INFO(e.message);
  REQUIRE(!e);
  const uint64_t data = h.dataOffset();
  SlicePlan plan;
  std::vector<SliceIndexer> ix = {SliceIndexer::range(1, 3), SliceIndexer::index(1)};
  REQUIRE(!planSlice(h, h.tensors[1], ix.data(), ix.size(), plan));
  REQUIRE(plan.ranges.size() == 2);
  CHECK(plan.ranges[0].begin == data + five + 16);
  CHECK(plan.ranges[1].end == data + five + 32);
  ix = {SliceIndexer::range(4294967296, 4294967300)};
  REQUIRE(!planSlice(h, h.tensors[0], ix.data(), ix.size(), plan));
  REQUIRE(plan.ranges.size() == 1);
  CHECK(plan.ranges[0].begin == data + 4294967296);
  CHECK(plan.byteLength == 4);
  ix = {SliceIndexer::index(-1)};
  REQUIRE(!planSlice(h, h.tensors[0], ix.data(), ix.size(), plan));
  CHECK(plan.ranges[0].begin == data + five - 1);
}

TEST_CASE("planSlice: more ranges than a vector can hold is an error, not an abort") {
  // U8 [2^59, 2]: taking one column needs 2^59 ranges of 16 bytes.
  std::string json = R"({"t":{"dtype":"U8","shape":[576460752303423488,2],)"
                     R"("data_offsets":[0,1152921504606846976]}})";
  auto prefix = makeFile(json);
  Header h;
  REQUIRE(!parseFile(prefix.data(), prefix.size(), prefix.size() + (uint64_t{1} << 60), h));
  SlicePlan plan;
  std::vector<SliceIndexer> ix = {SliceIndexer{}, SliceIndexer::index(0)};
  Error e = planSlice(h, h.tensors[0], ix.data(), ix.size(), plan);
  CHECK(e.code == ErrorCode::InvalidSlice);
  CHECK(e.message.find("576460752303423488 byte ranges") != std::string::npos);
  ix = {SliceIndexer::range(7, 9)};  // rows stay one range however many there are
  REQUIRE(!planSlice(h, h.tensors[0], ix.data(), ix.size(), plan));
  CHECK(plan.ranges.size() == 1);
}

// Property: for random shapes and valid indexers, the plan equals a naive element-by-element
// computation: same shape, ranges equal to the maximal runs of contiguous source elements
// (MisalignedSlice exactly when a run begins or ends inside a byte), and the planned bytes,
// concatenated, equal the gathered elements.
TEST_CASE("planSlice: matches a naive gather on random shapes and indexers") {
  std::mt19937_64 rng(20260501);
  auto below = [&rng](uint64_t n) {
    return std::uniform_int_distribution<uint64_t>(0, n - 1)(rng);
  };
  const Dtype dtypes[] = {Dtype::U8,  Dtype::BF16, Dtype::F32,
                          Dtype::C64, Dtype::F4,   Dtype::F6_E3M2};
  int planned = 0, misaligned = 0, empty = 0, multiRange = 0;
  for (int iteration = 0; iteration < 10000; ++iteration) {
    const Dtype dtype = dtypes[below(6)];
    const uint64_t bits = dtypeBits(dtype);
    Shape shape(below(5));
    uint64_t elements = 1;
    for (uint64_t& d : shape) elements *= d = below(8) == 0 ? 0 : 1 + below(4);
    if (elements * bits % 8 != 0) continue;  // not a valid tensor
    const uint64_t pad = below(4);
    auto file = tensorFile(dtype, shape, pad);
    const size_t dataStart = file.size() - static_cast<size_t>(pad + elements * bits / 8);
    for (size_t i = dataStart; i < file.size(); ++i) file[i] = static_cast<uint8_t>(rng());
    Header h;
    REQUIRE(!parseFile(file.data(), file.size(), file.size(), h));
    const TensorInfo& t = h.tensors[1];

    // Random valid indexers: pick [lo, hi) first, then a way to write it. A bound below dim
    // may be written negative, a bound of 0 (start) or dim (stop) may be left out.
    std::vector<SliceIndexer> ix(below(2) ? shape.size() : below(shape.size() + 1));
    Shape lo(shape.size(), 0), hi = shape, expectedShape;
    auto write = [&](uint64_t value, uint64_t dim) {
      return value < dim && below(2) ? static_cast<int64_t>(value) - static_cast<int64_t>(dim)
                                     : static_cast<int64_t>(value);
    };
    for (size_t d = 0; d < shape.size(); ++d) {
      const uint64_t dim = shape[d];
      if (d < ix.size()) {
        do {  // mostly non-empty, so that most cases produce ranges
          lo[d] = below(dim + 1);
          hi[d] = lo[d] + below(dim - lo[d] + 1);
        } while (lo[d] == hi[d] && dim > 0 && below(8) != 0);
        if (lo[d] < dim && below(3) == 0) {
          ix[d] = SliceIndexer::index(write(lo[d], dim));
          hi[d] = lo[d] + 1;
          continue;
        }
        ix[d].hasStart = lo[d] != 0 || below(2);
        ix[d].hasStop = hi[d] != dim || below(2);
        ix[d].start = write(lo[d], dim);
        ix[d].stop = write(hi[d], dim);
      }
      expectedShape.push_back(hi[d] - lo[d]);
    }

    // Naive: walk every selected element in row-major order.
    std::vector<uint64_t> source;  // element indices
    Shape at = lo;
    bool any = true;
    for (size_t d = 0; d < shape.size(); ++d) any = any && lo[d] < hi[d];
    while (any) {
      uint64_t linear = 0;
      for (size_t d = 0; d < shape.size(); ++d) linear = linear * shape[d] + at[d];
      source.push_back(linear);
      size_t d = shape.size();
      while (d > 0 && ++at[d - 1] == hi[d - 1]) at[d - 1] = lo[d - 1], --d;
      any = d > 0;
    }
    Ranges runs;  // in bits
    for (uint64_t s : source) {
      if (!runs.empty() && runs.back().second == s * bits)
        runs.back().second += bits;
      else
        runs.push_back({s * bits, s * bits + bits});
    }
    uint64_t firstBadBit = UINT64_MAX;  // the first run boundary inside a byte, in file order
    for (auto it = runs.rbegin(); it != runs.rend(); ++it) {
      if (it->second % 8 != 0) firstBadBit = it->second;
      if (it->first % 8 != 0) firstBadBit = it->first;
    }

    SlicePlan plan;
    Error e = planSlice(h, t, ix.data(), ix.size(), plan);
    INFO("iteration " << iteration << " dtype " << dtypeName(dtype) << " shape " << shapeJson(shape)
                      << " indexers " << ix.size() << ": " << e.message);
    const uint64_t start = h.absoluteBegin(t);
    if (firstBadBit != UINT64_MAX) {
      CHECK(e.code == ErrorCode::MisalignedSlice);
      CHECK(e.offset == start + firstBadBit / 8);
      ++misaligned;
      continue;
    }
    REQUIRE(!e);
    ++planned;
    empty += source.empty();
    multiRange += plan.ranges.size() > 1;
    CHECK(plan.shape == expectedShape);
    Ranges got;
    for (const ByteRange& r : plan.ranges)
      got.push_back({(r.begin - start) * 8, (r.end - start) * 8});
    REQUIRE(got == runs);

    std::vector<uint8_t> gathered((source.size() * bits + 7) / 8), concatenated;
    uint64_t bit = 0;
    for (uint64_t s : source)
      for (uint64_t b = s * bits; b < s * bits + bits; ++b, ++bit)
        if (file[start + b / 8] >> (b % 8) & 1) gathered[bit / 8] |= uint8_t(1u << (bit % 8));
    for (const ByteRange& r : plan.ranges)
      concatenated.insert(concatenated.end(), file.begin() + r.begin, file.begin() + r.end);
    CHECK(plan.byteLength == concatenated.size());
    CHECK(concatenated == gathered);
  }
  CHECK(planned > 4000);
  CHECK(misaligned > 200);
  CHECK(empty > 1000);
  CHECK(multiRange > 150);
}

TEST_CASE("parseSliceSpec: accepted forms") {
  std::vector<SliceIndexer> ix;
  REQUIRE(!parseSliceSpec("", ix));
  CHECK(ix.empty());
  REQUIRE(!parseSliceSpec(" \t\r\n", ix));
  CHECK(ix.empty());
  REQUIRE(!parseSliceSpec("0, 2:5", ix));
  REQUIRE(ix.size() == 2);
  CHECK(ix[0].kind == SliceIndexer::Kind::Index);
  CHECK(ix[0].start == 0);
  CHECK(ix[1].kind == SliceIndexer::Kind::Range);
  CHECK((ix[1].hasStart && ix[1].hasStop && ix[1].start == 2 && ix[1].stop == 5));
  REQUIRE(!parseSliceSpec(":, 3", ix));
  REQUIRE(ix.size() == 2);
  CHECK((ix[0].kind == SliceIndexer::Kind::Range && !ix[0].hasStart && !ix[0].hasStop));
  CHECK((ix[1].kind == SliceIndexer::Kind::Index && ix[1].start == 3));
  REQUIRE(!parseSliceSpec("1:", ix));
  CHECK((ix.size() == 1 && ix[0].hasStart && !ix[0].hasStop && ix[0].start == 1));
  REQUIRE(!parseSliceSpec(":-1", ix));
  CHECK((ix.size() == 1 && !ix[0].hasStart && ix[0].hasStop && ix[0].stop == -1));
  REQUIRE(!parseSliceSpec("  -2 : 7 ,\t:\n,007 ", ix));
  REQUIRE(ix.size() == 3);
  CHECK((ix[0].start == -2 && ix[0].stop == 7 && ix[1].kind == SliceIndexer::Kind::Range));
  CHECK((ix[2].kind == SliceIndexer::Kind::Index && ix[2].start == 7));
  REQUIRE(!parseSliceSpec("9223372036854775807:-9223372036854775808", ix));
  CHECK(ix[0].start == INT64_MAX);
  CHECK(ix[0].stop == INT64_MIN);
  REQUIRE(!parseSliceSpec("-0", ix));
  CHECK(ix[0].start == 0);
}

TEST_CASE("parseSliceSpec: everything else is InvalidSlice") {
  std::vector<SliceIndexer> ix;
  for (const char* spec : {",",
                           "0,",
                           ",0",
                           "0,,1",
                           "1:2:3",
                           "::2",
                           "::",
                           "...",
                           "a",
                           "1 2",
                           "--1",
                           "-",
                           "- 1",
                           "1.5",
                           "+1",
                           "[0]",
                           "0;1",
                           "1:a",
                           "9223372036854775808",
                           "-9223372036854775809",
                           "99999999999999999999"}) {
    INFO(spec);
    Error e = parseSliceSpec(spec, ix);
    CHECK(e.code == ErrorCode::InvalidSlice);
    CHECK(ix.empty());
  }
  Error e = parseSliceSpec("0, 2:x", ix);
  CHECK(e.message ==
        "slice spec \"0, 2:x\": expected ',' or the end of the spec, found 'x' at position 5");
  CHECK(e.offset == 0);
  CHECK(e.tensor.empty());
  e = parseSliceSpec("0,", ix);
  CHECK(e.message == "slice spec \"0,\": expected an integer or ':', found the end at position 2");
  e = parseSliceSpec("1:2:3", ix);
  CHECK(e.message == "slice spec \"1:2:3\": steps are not supported, found ':' at position 3");
  e = parseSliceSpec(" 99999999999999999999", ix);
  CHECK(e.message ==
        "slice spec \" 99999999999999999999\": the number does not fit in a signed "
        "64-bit integer, found '9' at position 1");
  e = parseSliceSpec(std::string("0,\x01", 3), ix);
  CHECK(e.message ==
        "slice spec \"0,\x01\": expected an integer or ':', found byte 1 at position 2");
}
