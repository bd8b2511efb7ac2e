#include <dirent.h>

#include <algorithm>
#include <catch.hpp>
#include <deque>
#include <random>
#include <set>

#include "header.hpp"
#include "support.hpp"
#include "writer.hpp"

using namespace st;

namespace {

const std::string kCorpus = ST_SOURCE_DIR "/../shared/corpus";

// Owns names and shapes; tensors() hands out views once all are added.
struct Input {
  std::vector<std::string> names;
  std::vector<Dtype> dtypes;
  std::vector<std::vector<uint64_t>> shapes;
  std::vector<uint64_t> byteLengths;

  // byteLength defaults to what the shape needs (sub-byte remainders rounded down).
  Input& add(std::string name, Dtype dtype, std::vector<uint64_t> shape, int64_t byteLength = -1) {
    uint64_t elements = 1;
    for (uint64_t d : shape) elements *= d;
    names.push_back(std::move(name));
    dtypes.push_back(dtype);
    shapes.push_back(std::move(shape));
    byteLengths.push_back(byteLength >= 0 ? uint64_t(byteLength) : elements * dtypeBits(dtype) / 8);
    return *this;
  }
  std::vector<WriterTensor> tensors() const {
    std::vector<WriterTensor> out(names.size());
    for (size_t i = 0; i < out.size(); ++i)
      out[i] = {names[i], dtypes[i], shapes[i].data(), uint32_t(shapes[i].size()), byteLengths[i]};
    return out;
  }
  Error plan(WritePlan& out, const WriterMetadata* metadata = nullptr) const {
    std::vector<WriterTensor> t = tensors();
    return planWrite(t.data(), t.size(), metadata, out);
  }
};

uint64_t readLe64(const std::string& s) {
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<uint8_t>(s[i]);
  return n;
}

// The header JSON without its padding, after checking the prefix and padding rules.
std::string jsonOf(const WritePlan& plan) {
  REQUIRE(plan.header.size() >= 8);
  uint64_t n = readLe64(plan.header);
  REQUIRE(n == plan.header.size() - 8);
  REQUIRE(n % 8 == 0);
  size_t last = plan.header.find_last_not_of(' ');
  REQUIRE(plan.header.size() - 1 - last < 8);
  return plan.header.substr(8, last - 7);
}

// Plans `input` and returns its JSON, requiring success.
std::string planJson(const Input& input, const WriterMetadata* metadata = nullptr) {
  WritePlan plan;
  Error e = input.plan(plan, metadata);
  INFO(e.message);
  REQUIRE(!e);
  return jsonOf(plan);
}

Error planError(const Input& input, const WriterMetadata* metadata = nullptr) {
  WritePlan plan;
  return input.plan(plan, metadata);
}

// Sorted file names in dir ending with suffix; found is false when dir cannot be opened.
std::vector<std::string> listDir(const std::string& dir, const std::string& suffix, bool& found) {
  std::vector<std::string> names;
  DIR* d = opendir(dir.c_str());
  found = d != nullptr;
  if (!d) return names;
  while (dirent* entry = readdir(d)) {
    std::string name = entry->d_name;
    if (name.size() > suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
      names.push_back(name);
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

Error parseBytes(const std::string& bytes, Header& h) {
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
  return parseFile(p, bytes.size(), bytes.size(), h);
}

std::vector<WriterTensor> tensorsOf(const Header& h) {
  std::vector<WriterTensor> out;
  for (const TensorInfo& t : h.tensors)
    out.push_back({h.name(t), t.dtype, h.shape(t), t.rank, t.end - t.begin});
  return out;
}

WriterMetadata metadataOf(const Header& h) {
  WriterMetadata out;
  for (const MetadataEntry& m : h.metadata) out.emplace_back(h.str(m.key), h.str(m.value));
  return out;
}

// Parses a plan's header as the reader would see it in the planned file.
Error parsePlan(const WritePlan& plan, Header& h) {
  const auto* p = reinterpret_cast<const uint8_t*>(plan.header.data());
  return parseHeader(p + 8, plan.header.size() - 8, plan.fileLength, h);
}

const char* kF32Entry = R"({"dtype":"F32","shape":[2],"data_offsets":[0,8]})";

}  // namespace

TEST_CASE("writer reproduces every reference file's header byte for byte") {
  bool found = false;
  const std::string dir = kCorpus + "/reference";
  std::vector<std::string> files = listDir(dir, ".safetensors", found);
  if (!found) {
    WARN("skipped: ../shared/corpus/reference not found");
    return;
  }
  CHECK(!files.empty());
  for (const std::string& name : files) {
    INFO(name);
    bool ok = false;
    std::string bytes = st_test::readFileBytes(dir + "/" + name, ok);
    REQUIRE(ok);
    Header h;
    Error e = parseBytes(bytes, h);
    INFO(e.message);
    REQUIRE(!e);
    std::vector<WriterTensor> tensors = tensorsOf(h);
    WriterMetadata metadata = metadataOf(h);
    WritePlan plan;
    e = planWrite(tensors.data(), tensors.size(), h.hasMetadata ? &metadata : nullptr, plan);
    INFO(e.message);
    REQUIRE(!e);
    CHECK(plan.header == bytes.substr(0, 8 + h.headerLength));
    CHECK(plan.fileLength == bytes.size());
    for (size_t i = 0; i < tensors.size(); ++i) {
      CHECK(plan.order[i] == i);  // the parsed table is in file order already
      CHECK(plan.offsets[i] == h.tensors[i].begin);
    }
  }
}

TEST_CASE("writer re-plans real files from other tools into headers the reader accepts") {
  bool found = false;
  std::vector<std::string> files = listDir(kCorpus, ".safetensors", found);
  if (!found) {
    WARN("skipped: ../shared/corpus not found");
    return;
  }
  for (const std::string& name : files) {
    INFO(name);
    bool ok = false;
    std::string bytes = st_test::readFileBytes(kCorpus + "/" + name, ok);
    REQUIRE(ok);
    Header original;
    Error e = parseBytes(bytes, original);
    INFO(e.message);
    REQUIRE(!e);
    std::vector<WriterTensor> tensors = tensorsOf(original);
    WriterMetadata metadata = metadataOf(original);
    WritePlan plan;
    e = planWrite(tensors.data(), tensors.size(), original.hasMetadata ? &metadata : nullptr, plan);
    INFO(e.message);
    REQUIRE(!e);
    Header again;
    e = parsePlan(plan, again);
    INFO(e.message);
    REQUIRE(!e);
    REQUIRE(again.tensors.size() == tensors.size());
    for (size_t i = 0; i < tensors.size(); ++i) {
      int64_t k = again.find(tensors[i].name);
      REQUIRE(k >= 0);
      const TensorInfo& t = again.tensors[size_t(k)];
      CHECK(t.dtype == tensors[i].dtype);
      CHECK(std::vector<uint64_t>(again.shape(t), again.shape(t) + t.rank) ==
            std::vector<uint64_t>(tensors[i].shape, tensors[i].shape + tensors[i].rank));
      CHECK(t.begin == plan.offsets[i]);
      CHECK(t.end - t.begin == tensors[i].byteLength);
    }
    CHECK(again.hasMetadata == original.hasMetadata);
    std::sort(metadata.begin(), metadata.end());
    CHECK(metadataOf(again) == metadata);
  }
}

TEST_CASE("writer emits compact JSON, padding and the length prefix") {
  WritePlan plan;
  REQUIRE(!Input().add("w", Dtype::F32, {2, 3}).plan(plan));
  CHECK(plan.header.size() == 8 + 64);
  CHECK(plan.header.substr(0, 8) == std::string("\x40\0\0\0\0\0\0\0", 8));
  CHECK(jsonOf(plan) == R"({"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]}})");
  CHECK(plan.header.substr(8 + 57) == std::string(7, ' '));
  CHECK(plan.fileLength == 8 + 64 + 24);
  CHECK(plan.order == std::vector<uint32_t>{0});
  CHECK(plan.offsets == std::vector<uint64_t>{0});
}

TEST_CASE("writer of no tensors writes {} padded to 8") {
  WritePlan plan;
  REQUIRE(!planWrite(nullptr, 0, nullptr, plan));
  CHECK(plan.header == std::string("\x08\0\0\0\0\0\0\0{}      ", 16));
  CHECK(plan.fileLength == 16);
  CHECK(plan.order.empty());
}

TEST_CASE("writer orders by dtype descending, then by name bytes") {
  Input in;
  in.add("b", Dtype::BOOL, {1}).add("a", Dtype::U8, {1}).add("B", Dtype::U8, {1});
  in.add("z", Dtype::U64, {1}).add("f4", Dtype::F4, {2}).add("c", Dtype::F32, {1});
  in.add("\xC3\xA9", Dtype::U8, {1});  // non-ASCII sorts after ASCII by bytes
  WritePlan plan;
  REQUIRE(!in.plan(plan));
  CHECK(plan.order == std::vector<uint32_t>{3, 5, 2, 1, 6, 4, 0});
  CHECK(plan.offsets == std::vector<uint64_t>{16, 13, 12, 0, 15, 8, 14});
  CHECK(plan.fileLength == plan.header.size() + 17);
}

TEST_CASE("writer escapes strings as serde_json does") {
  auto entry = [](const std::string& quotedName) {
    return "{" + quotedName + R"(:{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})";
  };
  auto one = [](std::string name) {
    return planJson(Input().add(std::move(name), Dtype::U8, {1}));
  };
  CHECK(one("a\"b") == entry(R"("a\"b")"));
  CHECK(one("a\\b") == entry(R"("a\\b")"));
  CHECK(one("nl\ncr\rtab\t") == entry(R"("nl\ncr\rtab\t")"));
  CHECK(one("\b\f") == entry(R"("\b\f")"));
  CHECK(one("\x01") == entry(R"("\u0001")"));
  CHECK(one("\x1f\x1b") == entry(R"("\u001f\u001b")"));
  CHECK(one(std::string("a\0b", 3)) == entry(R"("a\u0000b")"));
  CHECK(one("a/b\x7f") == entry("\"a/b\x7f\""));
  CHECK(one("\xC3\xBCn\xC3\xAF \xF0\x9F\x98\x80") ==
        entry("\"\xC3\xBCn\xC3\xAF \xF0\x9F\x98\x80\""));
  CHECK(one("") == entry(R"("")"));
  WriterMetadata m = {{"k\"\n", "v\\\x02/"}};
  CHECK(planJson(Input(), &m) == R"({"__metadata__":{"k\"\n":"v\\\u0002/"}})");
}

TEST_CASE("writer metadata: null omits the key, empty writes {}, keys are sorted") {
  Input in;
  in.add("w", Dtype::F32, {2});
  CHECK(planJson(in) == std::string(R"({"w":)") + kF32Entry + "}");
  WriterMetadata empty;
  CHECK(planJson(in, &empty) == std::string(R"({"__metadata__":{},"w":)") + kF32Entry + "}");
  WriterMetadata m = {{"b", "2"}, {"\xC3\xA9", "4"}, {"a", "1"}, {"B", "3"}, {"", ""}};
  CHECK(planJson(in, &m) == std::string("{\"__metadata__\":{\"\":\"\",\"B\":\"3\",\"a\":\"1\","
                                        "\"b\":\"2\",\"\xC3\xA9\":\"4\"},\"w\":") +
                                kF32Entry + "}");
  CHECK(planJson(Input(), &empty) == R"({"__metadata__":{}})");
}

TEST_CASE("writer handles zero-size and scalar tensors") {
  Input in;
  in.add("z_i64", Dtype::I64, {0}).add("nz", Dtype::F32, {1}).add("z_f32", Dtype::F32, {2, 0});
  in.add("s_bool", Dtype::BOOL, {}).add("s_f64", Dtype::F64, {});
  CHECK(planJson(in) == R"({"z_i64":{"dtype":"I64","shape":[0],"data_offsets":[0,0]},)"
                        R"("s_f64":{"dtype":"F64","shape":[],"data_offsets":[0,8]},)"
                        R"("nz":{"dtype":"F32","shape":[1],"data_offsets":[8,12]},)"
                        R"("z_f32":{"dtype":"F32","shape":[2,0],"data_offsets":[12,12]},)"
                        R"("s_bool":{"dtype":"BOOL","shape":[],"data_offsets":[12,13]}})");
  // A scalar may come without a shape pointer at all.
  WriterTensor scalar{"s", Dtype::I32, nullptr, 0, 4};
  WritePlan plan;
  REQUIRE(!planWrite(&scalar, 1, nullptr, plan));
  CHECK(jsonOf(plan) == R"({"s":{"dtype":"I32","shape":[],"data_offsets":[0,4]}})");
}

TEST_CASE("writer plans offsets above 2^32 from lengths alone") {
  Input in;
  in.add("big", Dtype::U8, {5000000000}).add("w", Dtype::F32, {2}).add("z", Dtype::U8, {3});
  in.add("huge", Dtype::I64, {uint64_t(1) << 30});
  WritePlan plan;
  REQUIRE(!in.plan(plan));
  CHECK(plan.order == std::vector<uint32_t>{3, 1, 0, 2});
  CHECK(plan.offsets == std::vector<uint64_t>{8589934600, 8589934592, 13589934600, 0});
  CHECK(plan.fileLength == plan.header.size() + 13589934603);
  CHECK(jsonOf(plan) ==
        R"({"huge":{"dtype":"I64","shape":[1073741824],"data_offsets":[0,8589934592]},)"
        R"("w":{"dtype":"F32","shape":[2],"data_offsets":[8589934592,8589934600]},)"
        R"("big":{"dtype":"U8","shape":[5000000000],"data_offsets":[8589934600,13589934600]},)"
        R"("z":{"dtype":"U8","shape":[3],"data_offsets":[13589934600,13589934603]}})");
}

TEST_CASE("writer rejects a tensor named __metadata__") {
  Error e = planError(Input().add("__metadata__", Dtype::U8, {1}));
  CHECK(e.code == ErrorCode::InvalidHeaderDeserialization);
  CHECK(e.tensor == "__metadata__");
  CHECK(e.message == R"(a tensor cannot be named "__metadata__": that key holds the metadata)");
}

TEST_CASE("writer rejects duplicate tensor names, also across dtypes") {
  Error e =
      planError(Input().add("a", Dtype::U8, {1}).add("b", Dtype::U8, {1}).add("a", Dtype::U8, {2}));
  CHECK(e.code == ErrorCode::InvalidHeaderDeserialization);
  CHECK(e.message == R"(duplicate tensor name "a")");
  e = planError(
      Input().add("x", Dtype::F32, {1}).add("y", Dtype::U8, {1}).add("x", Dtype::BOOL, {1}));
  CHECK(e.code == ErrorCode::InvalidHeaderDeserialization);
  CHECK(e.tensor == "x");
}

TEST_CASE("writer rejects duplicate metadata keys") {
  WriterMetadata m = {{"k", "1"}, {"j", "2"}, {"k", "3"}};
  Error e = planError(Input(), &m);
  CHECK(e.code == ErrorCode::InvalidHeaderDeserialization);
  CHECK(e.message == R"(duplicate metadata key "k")");
}

TEST_CASE("writer rejects a byte length that does not match the shape") {
  Error e = planError(Input().add("first", Dtype::U64, {1}).add("w", Dtype::F32, {2, 3}, 20));
  CHECK(e.code == ErrorCode::TensorInvalidInfo);
  CHECK(e.tensor == "w");
  CHECK(e.offset == 8);
  CHECK(e.message == R"(tensor "w" F32 [2, 3] needs 24 bytes but its data is 20)");
}

TEST_CASE("writer rejects element and bit counts that overflow 64 bits") {
  const uint64_t k32 = uint64_t(1) << 32;
  Error e = planError(Input().add("e", Dtype::U8, {k32, k32}, 0));
  CHECK(e.code == ErrorCode::ValidationOverflow);
  CHECK(e.message ==
        R"(tensor "e" shape [4294967296, 4294967296]: element count overflows 64 bits)");
  // The running product overflows before the 0: the reader rejects it too.
  CHECK(planError(Input().add("e", Dtype::U8, {k32, k32, 0}, 0)).code ==
        ErrorCode::ValidationOverflow);
  e = planError(Input().add("b", Dtype::F32, {uint64_t(1) << 62}, 0));
  CHECK(e.code == ErrorCode::ValidationOverflow);
  CHECK(e.message ==
        R"(tensor "b" 4611686018427387904 elements of F32: bit count overflows 64 bits)");
}

TEST_CASE("writer rejects data or a file that would end past 2^64") {
  const uint64_t half = uint64_t(1) << 60;  // bits still fit: 2^60 x 8
  Input in;
  for (const char* name :
       {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o", "p"})
    in.add(name, Dtype::U8, {half});
  Error e = planError(in);
  CHECK(e.code == ErrorCode::ValidationOverflow);
  CHECK(e.tensor == "p");
  CHECK(e.offset == 15 * half);
  // Eight tensors of 2^61 - 1 bytes: the data fits in 64 bits, the file with its header not.
  Input nearly;
  for (const char* name : {"a", "b", "c", "d", "e", "f", "g", "h"})
    nearly.add(name, Dtype::U8, {(uint64_t(1) << 61) - 1});
  e = planError(nearly);
  CHECK(e.code == ErrorCode::ValidationOverflow);
  CHECK(e.message.find("end the file past 2^64") != std::string::npos);
}

TEST_CASE("writer rejects sub-byte tensors that are not whole bytes") {
  Error e = planError(Input().add("f4", Dtype::F4, {3}, 1));
  CHECK(e.code == ErrorCode::MisalignedSlice);
  CHECK(e.message == R"(tensor "f4" 3 elements of F4 are 12 bits, not a whole number of bytes)");
  CHECK(planError(Input().add("s", Dtype::F4, {}, 0)).code == ErrorCode::MisalignedSlice);
  CHECK(planError(Input().add("f6", Dtype::F6_E2M3, {2}, 1)).code == ErrorCode::MisalignedSlice);
  CHECK(planJson(Input().add("f6", Dtype::F6_E3M2, {4})) ==
        R"({"f6":{"dtype":"F6_E3M2","shape":[4],"data_offsets":[0,3]}})");
}

TEST_CASE("writer rejects strings that are not UTF-8") {
  Error e = planError(Input().add("ok", Dtype::U8, {1}).add("a\xFF", Dtype::U8, {1}));
  CHECK(e.code == ErrorCode::InvalidHeader);
  CHECK(e.tensor == "a\xFF");
  CHECK(e.message == "tensor name is not valid UTF-8: bad byte 0xFF at byte 1");
  CHECK(planError(Input().add("\xED\xA0\x80", Dtype::U8, {1})).code == ErrorCode::InvalidHeader);
  CHECK(planError(Input().add("\xC0\xAF", Dtype::U8, {1})).code == ErrorCode::InvalidHeader);
  WriterMetadata badKey = {{"\xE2\x82", "v"}};
  CHECK(planError(Input(), &badKey).code == ErrorCode::InvalidHeader);
  WriterMetadata badValue = {{"k", "\x80"}};
  e = planError(Input(), &badValue);
  CHECK(e.code == ErrorCode::InvalidHeader);
  CHECK(e.message == R"(metadata value of "k" is not valid UTF-8: bad byte 0x80 at byte 0)");
}

TEST_CASE("writer rejects a dtype code outside the enum") {
  FlatWriteInput in;
  const uint32_t nameLength = 1, rank = 0;
  const uint8_t dtype = kDtypeCount;
  const uint64_t byteLength = 1;
  in.tensorCount = 1;
  in.names = "x";
  in.nameLengths = &nameLength;
  in.dtypes = &dtype;
  in.ranks = &rank;
  in.byteLengths = &byteLength;
  WritePlan plan;
  Error e = planWriteFlat(in, plan);
  CHECK(e.code == ErrorCode::InvalidHeaderDeserialization);
  CHECK(e.message == R"(tensor "x" has unknown dtype code 22)");
}

TEST_CASE("writer rejects a header over 100,000,000 bytes") {
  // {"<name>":{"dtype":"U8","shape":[0],"data_offsets":[0,0]}} is the name plus 52 bytes.
  Error e = planError(Input().add(std::string(kMaxHeaderLength - 51, 'a'), Dtype::U8, {0}));
  CHECK(e.code == ErrorCode::HeaderTooLarge);
  CHECK(e.message == "header would be 100000008 bytes, over the limit of 100000000");
}

TEST_CASE("writer rejects more tensors than a header can hold before reading any") {
  WritePlan plan;
  Error e = planWrite(nullptr, kMaxHeaderLength + 1, nullptr, plan);
  CHECK(e.code == ErrorCode::HeaderTooLarge);
  CHECK(
      e.message ==
      "100000001 tensors and 0 metadata entries cannot fit in a header of at most 100000000 bytes");
}

// Kept out of the default run ([.]): parsing a 100 MB header takes seconds (minutes under
// sanitizers or in wasm). The native release suite runs it (ctest core_tests_slow).
TEST_CASE("writer accepts a header of exactly 100,000,000 bytes", "[.][slow]") {
  WritePlan plan;
  Error e = Input().add(std::string(kMaxHeaderLength - 52, 'a'), Dtype::U8, {0}).plan(plan);
  INFO(e.message);
  REQUIRE(!e);
  CHECK(plan.header.size() == 8 + kMaxHeaderLength);
  CHECK(plan.header.back() == '}');
}

TEST_CASE("flat input plans the same bytes as WriterTensor input") {
  Input in;
  in.add("b", Dtype::F32, {2, 3}).add("", Dtype::BOOL, {}).add("a\"", Dtype::F32, {1});
  WriterMetadata m = {{"z", "1"}, {"a", "2"}};
  WritePlan expected;
  REQUIRE(!in.plan(expected, &m));

  const std::string names = "ba\"", strings = "z1a2";
  const std::vector<uint32_t> nameLengths = {1, 0, 2}, ranks = {2, 0, 1}, lengths = {1, 1, 1, 1};
  const std::vector<uint8_t> dtypes = {uint8_t(Dtype::F32), uint8_t(Dtype::BOOL),
                                       uint8_t(Dtype::F32)};
  const std::vector<uint64_t> dims = {2, 3, 1}, byteLengths = {24, 1, 4};
  FlatWriteInput flat;
  flat.tensorCount = 3;
  flat.names = names.data();
  flat.nameLengths = nameLengths.data();
  flat.dtypes = dtypes.data();
  flat.ranks = ranks.data();
  flat.dims = dims.data();
  flat.byteLengths = byteLengths.data();
  flat.hasMetadata = true;
  flat.metadataCount = 2;
  flat.metadataStrings = strings.data();
  flat.metadataLengths = lengths.data();
  WritePlan plan;
  REQUIRE(!planWriteFlat(flat, plan));
  CHECK(plan.header == expected.header);
  CHECK(plan.order == expected.order);
  CHECK(plan.offsets == expected.offsets);
  CHECK(plan.fileLength == expected.fileLength);
  flat.hasMetadata = false;
  REQUIRE(!planWriteFlat(flat, plan));
  CHECK(jsonOf(plan).find("__metadata__") == std::string::npos);
}

TEST_CASE("writer round trip: random tensor sets parse back as planned") {
  std::mt19937_64 rng(20260530);
  auto pick = [&rng](uint64_t n) { return std::uniform_int_distribution<uint64_t>(0, n - 1)(rng); };
  // Pieces of names: quotes, backslashes, control bytes, NUL, DEL, 2- and 4-byte UTF-8.
  const std::vector<std::string> pieces = {"a",    "b",    "Z",    ".",        "/",
                                           "\"",   "\\",   "\n",   "\t",       std::string(1, '\0'),
                                           "\x01", "\x1f", "\x7f", "\xC3\xA9", "\xF0\x9F\x98\x80",
                                           "_"};
  auto randomString = [&]() {
    std::string s;
    for (uint64_t n = pick(6); n > 0; --n) s += pieces[pick(pieces.size())];
    return s;
  };
  for (int round = 0; round < 500; ++round) {
    Input in;
    std::set<std::string> used;
    for (uint64_t n = pick(10); n > 0; --n) {
      std::string name = randomString();
      if (!used.insert(name).second) continue;
      auto dtype = static_cast<Dtype>(pick(kDtypeCount));
      std::vector<uint64_t> shape;
      uint64_t elements = 1;
      for (uint64_t r = pick(4); r > 0; --r) {
        shape.push_back(pick(5));  // 0 included: zero-size tensors
        elements *= shape.back();
      }
      if (elements * dtypeBits(dtype) % 8 != 0) shape.push_back(4);  // whole bytes for F4/F6
      in.add(name, dtype, shape);
    }
    std::set<std::string> keys;
    for (uint64_t n = pick(4); n > 0; --n) keys.insert(randomString());
    std::deque<std::string> values;  // keeps its elements in place as it grows
    WriterMetadata metadata;
    for (const std::string& key : keys) {
      values.push_back(randomString());
      metadata.emplace_back(key, values.back());
    }
    std::shuffle(metadata.begin(), metadata.end(), rng);
    const bool withMetadata = pick(2) == 0;
    WritePlan plan;
    Error e = in.plan(plan, withMetadata ? &metadata : nullptr);
    INFO("round " << round << ": " << e.message);
    REQUIRE(!e);
    jsonOf(plan);  // checks the length prefix and the padding
    Header h;
    e = parsePlan(plan, h);
    INFO(e.message);
    REQUIRE(!e);
    REQUIRE(h.tensors.size() == in.names.size());
    uint64_t dataLength = 0;
    for (size_t k = 0; k < h.tensors.size(); ++k) {
      const TensorInfo& t = h.tensors[k];
      const uint32_t i = plan.order[k];
      CHECK(h.name(t) == in.names[i]);
      CHECK(t.dtype == in.dtypes[i]);
      CHECK(std::vector<uint64_t>(h.shape(t), h.shape(t) + t.rank) == in.shapes[i]);
      CHECK(t.begin == plan.offsets[i]);
      CHECK(t.end - t.begin == in.byteLengths[i]);
      dataLength += in.byteLengths[i];
      if (k > 0) {  // dtype descending, then name ascending
        const uint32_t prev = plan.order[k - 1];
        CHECK((in.dtypes[prev] > in.dtypes[i] ||
               (in.dtypes[prev] == in.dtypes[i] && in.names[prev] < in.names[i])));
      }
    }
    CHECK(plan.fileLength == plan.header.size() + dataLength);
    CHECK(h.hasMetadata == withMetadata);
    if (withMetadata) {
      std::sort(metadata.begin(), metadata.end());
      CHECK(metadataOf(h) == metadata);
    }
  }
}
