// Awkward forms (awkward.hpp): parsing each node type as awkward's Form.to_dict writes it, the
// form rules, buffers against the form (presence, dtype, length), and the lazy checks of
// offsets, starts/stops, index and tags values. One test per error, asserting code, buffer
// name and the message's key words.
#include <catch.hpp>

#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "awkward.hpp"

using namespace st;

namespace {

struct FakeTensor {
  Dtype dtype;
  uint64_t elements;
};

// Parses, binds every buffer the file "has" (byte offsets: 1000 per buffer, in bind order)
// and checks.
Error load(std::string_view form, const std::string& length,
           const std::map<std::string, FakeTensor>& file, AkForm& out) {
  if (Error e = parseAkForm(form, length, out)) return e;
  uint64_t at = 1000;
  for (AkBuffer& b : out.buffers) {
    auto it = file.find(b.name);
    if (it == file.end()) continue;
    b.found = true;
    b.fileDtype = it->second.dtype;
    b.elements = it->second.elements;
    b.byteOffset = at;
    at += 1000;
  }
  return checkAkBuffers(out);
}

Error formError(const std::string& form, const std::string& length = "0") {
  AkForm f;
  return parseAkForm(form, length, f);
}

bool mentions(const Error& e, const std::string& text) {
  return e.message.find(text) != std::string::npos;
}

const std::string kNumpy =
    R"({"class": "NumpyArray", "primitive": "int64", "inner_shape": [], "parameters": {}, "form_key": "node1"})";
const std::string kJagged = R"({"class": "ListOffsetArray", "offsets": "i64", "content": )" +
                            kNumpy + R"(, "parameters": {}, "form_key": "node0"})";

}  // namespace

TEST_CASE("a jagged array: form, buffers, capacities, tree", "[awkward]") {
  AkForm f;
  Error e =
      load(kJagged, "3", {{"node0-offsets", {Dtype::I64, 4}}, {"node1-data", {Dtype::I64, 6}}}, f);
  REQUIRE_FALSE(e);
  REQUIRE(f.nodes.size() == 2);
  CHECK(f.nodes[0].cls == AkClass::ListOffsetArray);
  CHECK(f.nodes[0].contents == std::vector<uint32_t>{1});
  CHECK(f.nodes[0].capacity == 3);
  CHECK(f.nodes[1].capacity == 6);
  REQUIRE(f.buffers.size() == 2);
  CHECK(f.buffers[0].name == "node0-offsets");
  CHECK(f.buffers[0].dtype == Dtype::I64);
  CHECK(f.buffers[1].name == "node1-data");
  const std::string tree = akFormTreeJson(f);
  CHECK(
      tree.find(
          R"("class":"ListOffsetArray","form_key":"node0","parameters":{},"offsets":"i64","buffers":{"offsets":"node0-offsets"},"contents":[1],"capacity":3)") !=
      std::string::npos);
  CHECK(tree.find(R"("primitive":"int64","dtype":"I64","inner_shape":[])") != std::string::npos);
  CHECK(tree.rfind(R"({"length":3,)", 0) == 0);
}

TEST_CASE("every node type parses", "[awkward]") {
  const std::string form =
      R"({"class": "RecordArray", "fields": ["a", "b", "c", "d", "e", "f", "g", "h"], "contents": [
    {"class": "RegularArray", "size": 2, "content": {"class": "NumpyArray", "primitive": "float32", "inner_shape": [3], "form_key": "n2"}, "form_key": "n1"},
    {"class": "ListArray", "starts": "i32", "stops": "i32", "content": {"class": "EmptyArray", "form_key": "n4"}, "form_key": "n3"},
    {"class": "IndexedArray", "index": "u32", "content": {"class": "NumpyArray", "primitive": "bool", "form_key": "n6"}, "form_key": "n5"},
    {"class": "IndexedOptionArray", "index": "i64", "content": {"class": "ListOffsetArray", "offsets": "u32", "content": {"class": "NumpyArray", "primitive": "uint8", "parameters": {"__array__": "char"}, "form_key": "n9"}, "parameters": {"__array__": "string"}, "form_key": "n8"}, "form_key": "n7"},
    {"class": "ByteMaskedArray", "mask": "i8", "valid_when": true, "content": {"class": "NumpyArray", "primitive": "float64", "form_key": "n11"}, "form_key": "n10"},
    {"class": "BitMaskedArray", "mask": "u8", "valid_when": false, "lsb_order": true, "content": {"class": "RecordArray", "fields": null, "contents": [{"class": "NumpyArray", "primitive": "int16", "form_key": "n14"}], "form_key": "n13"}, "form_key": "n12"},
    {"class": "UnmaskedArray", "content": {"class": "NumpyArray", "primitive": "complex64", "form_key": "n16"}, "form_key": "n15"},
    {"class": "UnionArray", "tags": "i8", "index": "i64", "contents": [{"class": "NumpyArray", "primitive": "uint64", "form_key": "n18"}, {"class": "NumpyArray", "primitive": "float16", "form_key": "n19"}], "form_key": "n17"}
  ], "form_key": "n0"})";
  AkForm f;
  Error e = load(form, "2",
                 {{"n2-data", {Dtype::F32, 2 * 2 * 3}},
                  {"n3-starts", {Dtype::I32, 2}},
                  {"n3-stops", {Dtype::I32, 2}},
                  {"n5-index", {Dtype::U32, 2}},
                  {"n6-data", {Dtype::BOOL, 1}},
                  {"n7-index", {Dtype::I64, 2}},
                  {"n8-offsets", {Dtype::U32, 1}},
                  {"n9-data", {Dtype::U8, 0}},
                  {"n10-mask", {Dtype::I8, 2}},
                  {"n11-data", {Dtype::F64, 2}},
                  {"n12-mask", {Dtype::U8, 1}},
                  {"n14-data", {Dtype::I16, 2}},
                  {"n16-data", {Dtype::C64, 2}},
                  {"n17-tags", {Dtype::I8, 2}},
                  {"n17-index", {Dtype::I64, 2}},
                  {"n18-data", {Dtype::U64, 1}},
                  {"n19-data", {Dtype::F16, 1}}},
                 f);
  REQUIRE_FALSE(e);
  REQUIRE(f.nodes.size() == 20);
  const AkClass expected[] = {
      AkClass::RecordArray,    AkClass::RegularArray,       AkClass::NumpyArray,
      AkClass::ListArray,      AkClass::EmptyArray,         AkClass::IndexedArray,
      AkClass::NumpyArray,     AkClass::IndexedOptionArray, AkClass::ListOffsetArray,
      AkClass::NumpyArray,     AkClass::ByteMaskedArray,    AkClass::NumpyArray,
      AkClass::BitMaskedArray, AkClass::RecordArray,        AkClass::NumpyArray,
      AkClass::UnmaskedArray,  AkClass::NumpyArray,         AkClass::UnionArray,
      AkClass::NumpyArray,     AkClass::NumpyArray};
  for (size_t i = 0; i < 20; ++i) CHECK(f.nodes[i].cls == expected[i]);
  CHECK(f.nodes[0].fields.size() == 8);
  CHECK(f.nodes[1].size == 2);
  CHECK(f.nodes[2].innerShape == std::vector<uint64_t>{3});
  CHECK(f.nodes[2].capacity == 4);  // 12 floats, 3 per entry
  CHECK(f.nodes[1].capacity == 2);  // 4 rows, 2 per entry
  CHECK(f.nodes[8].array == "string");
  CHECK(f.nodes[8].capacity == 0);
  CHECK(f.nodes[12].lsbOrder);
  CHECK_FALSE(f.nodes[12].validWhen);
  CHECK(f.nodes[12].capacity == 2);  // 8 bits, but its content holds 2
  CHECK(f.nodes[13].isTuple);
  CHECK(f.nodes[17].contents.size() == 2);
  CHECK(f.nodes[0].capacity == 2);
  CHECK(f.nodes[0].limitedBy != kAkNone);
}

TEST_CASE("old-style forms: suffixed classes, record contents as an object, primitive strings",
          "[awkward]") {
  AkForm f;
  REQUIRE_FALSE(parseAkForm(
      R"({"class": "ListOffsetArray64", "offsets": "i64", "content": {"class": "RecordArray",
      "contents": {"y": {"class": "NumpyArray", "primitive": "int8", "form_key": "b"}, "x": {"class": "NumpyArray", "primitive": "int8", "form_key": "a"}}}, "form_key": "o"})",
      "0", f));
  CHECK(f.nodes[1].fields == std::vector<std::string>{"y", "x"});  // the form's order, not sorted
  REQUIRE_FALSE(parseAkForm(R"({"class": "RecordArray", "contents": []})", "5", f));
  CHECK(f.nodes[0].isTuple);
  REQUIRE_FALSE(checkAkBuffers(f));
  CHECK(f.nodes[0].capacity == kAkUnbounded);  // no fields: any length
  Error e = formError(R"({"class": "UnmaskedArray", "content": "int64"})");
  CHECK(e.code ==
        ErrorCode::AwkwardInvalidForm);  // a bare primitive has no form_key: no buffer name
  CHECK(mentions(e, "root.content has no form_key"));
}

TEST_CASE("form errors", "[awkward]") {
  struct Case {
    const char* form;
    const char* words;
  };
  const Case cases[] = {
      {"not json", "not valid JSON"},
      {"[]", "root is not an object"},
      {R"({"primitive": "int64"})", "has no \"class\""},
      {R"({"class": "VirtualArray"})", "unknown class \"VirtualArray\""},
      {R"({"class": "NumpyArray", "primitive": "int65", "form_key": "a"})",
       "unknown primitive \"int65\""},
      {R"({"class": "NumpyArray", "primitive": "int64", "inner_shape": [-1], "form_key": "a"})",
       "inner_shape entry"},
      {R"({"class": "NumpyArray", "primitive": "int64", "inner_shape": [4294967296, 4294967296], "form_key": "a"})",
       "overflows"},
      {R"({"class": "NumpyArray", "primitive": "int64", "parameters": [], "form_key": "a"})",
       "\"parameters\" that is not an object"},
      {R"({"class": "NumpyArray", "primitive": "int64", "form_key": 3})",
       "\"form_key\" that is not a string"},
      {R"({"class": "RegularArray", "size": -2, "content": {"class": "EmptyArray"}})", "\"size\""},
      {R"({"class": "ListOffsetArray", "offsets": "i8", "content": {"class": "EmptyArray"}, "form_key": "a"})",
       "\"offsets\" (one of \"i32\", \"u32\", \"i64\")"},
      {R"({"class": "IndexedOptionArray", "index": "u32", "content": {"class": "EmptyArray"}, "form_key": "a"})",
       "\"index\" (one of \"i32\", \"i64\")"},
      {R"({"class": "ByteMaskedArray", "mask": "u8", "valid_when": true, "content": {"class": "EmptyArray"}, "form_key": "a"})",
       "\"mask\""},
      {R"({"class": "BitMaskedArray", "mask": "u8", "valid_when": true, "content": {"class": "EmptyArray"}, "form_key": "a"})",
       "boolean \"lsb_order\""},
      {R"({"class": "ListOffsetArray", "offsets": "i64", "form_key": "a"})", "has no \"content\""},
      {R"({"class": "RecordArray", "fields": ["x"], "contents": []})", "1 fields but 0 contents"},
      {R"({"class": "RecordArray", "fields": ["x", "x"], "contents": [{"class": "EmptyArray"}, {"class": "EmptyArray"}]})",
       "field \"x\" twice"},
      {R"({"class": "RecordArray", "fields": ["x"], "contents": {"x": {"class": "EmptyArray"}}})",
       "not an array"},
      {R"({"class": "UnionArray", "tags": "i8", "index": "i64", "contents": [{"class": "EmptyArray"}], "form_key": "u"})",
       "1 contents"},
      {R"({"class": "IndexedOptionArray", "index": "i64", "content": {"class": "UnmaskedArray", "content": {"class": "EmptyArray"}}, "form_key": "a"})",
       "awkward forbids"},
      {R"({"class": "ListOffsetArray", "offsets": "i64", "content": {"class": "NumpyArray", "primitive": "int8", "form_key": "c"}, "parameters": {"__array__": "string"}, "form_key": "a"})",
       "not a uint8 NumpyArray with __array__ \"char\""},
      {R"({"class": "ListOffsetArray", "offsets": "i64", "content": {"class": "NumpyArray", "primitive": "uint8", "form_key": "c"}, "form_key": "a", "parameters": {"__array__": "string"}})",
       "__array__ \"char\""},
      {R"({"class": "NumpyArray", "primitive": "int32", "parameters": {"__array__": "char"}, "form_key": "a"})",
       "not a uint8 NumpyArray"},
  };
  for (const Case& c : cases) {
    INFO(c.form);
    Error e = formError(c.form);
    CHECK(e.code == ErrorCode::AwkwardInvalidForm);
    CHECK(mentions(e, c.words));
  }
  Error nested = formError(
      R"({"class": "RecordArray", "fields": ["a"], "contents": [{"class": "ListOffsetArray", "offsets": "i32", "content": "int8"}]})");
  CHECK(mentions(nested, "root.\"a\""));
}

TEST_CASE("deep forms are refused without recursion", "[awkward]") {
  std::string deep;
  for (int i = 0; i < 100000; ++i) deep += R"({"class": "UnmaskedArray", "content": )";
  Error e = formError(deep);
  CHECK(e.code == ErrorCode::AwkwardInvalidForm);  // truncated JSON or too deep: either way refused
  std::string nested;
  for (int i = 0; i < 200; ++i) nested += R"({"class": "RegularArray", "size": 1, "content": )";
  nested += R"({"class": "EmptyArray"})";
  for (int i = 0; i < 200; ++i) nested += "}";
  e = formError(nested);
  CHECK(e.code == ErrorCode::AwkwardInvalidForm);
  CHECK(mentions(e, "deeper than 128"));
}

TEST_CASE("unsupported primitives", "[awkward]") {
  for (const char* p : {"complex128", "float128", "datetime64", "timedelta64"}) {
    Error e = formError(std::string(R"({"class": "NumpyArray", "primitive": ")") + p +
                        R"(", "form_key": "a"})");
    CHECK(e.code == ErrorCode::AwkwardUnsupportedType);
    CHECK(mentions(e, p));
  }
}

TEST_CASE("length metadata", "[awkward]") {
  for (const char* bad :
       {"", "-1", "1.0", " 3", "0x10", "9007199254740992", "99999999999999999999999"}) {
    INFO(bad);
    CHECK(formError(kJagged, bad).code == ErrorCode::AwkwardInvalidMetadata);
  }
  AkForm f;
  CHECK_FALSE(parseAkForm(kJagged, "9007199254740991", f));
}

TEST_CASE("buffer errors: missing, wrong dtype, too short", "[awkward]") {
  AkForm f;
  Error e = load(kJagged, "3", {{"node0-offsets", {Dtype::I64, 4}}}, f);
  CHECK(e.code == ErrorCode::AwkwardMissingBuffer);
  CHECK(e.tensor == "node1-data");
  CHECK(mentions(e, "node1 (NumpyArray)"));

  e = load(kJagged, "3", {{"node0-offsets", {Dtype::I32, 4}}, {"node1-data", {Dtype::I64, 6}}}, f);
  CHECK(e.code == ErrorCode::AwkwardDtypeMismatch);
  CHECK(e.tensor == "node0-offsets");
  CHECK(e.offset == 1000);
  CHECK(mentions(e, "is I32, the form says I64"));

  e = load(kJagged, "4", {{"node0-offsets", {Dtype::I64, 4}}, {"node1-data", {Dtype::I64, 6}}}, f);
  CHECK(e.code == ErrorCode::AwkwardBufferTooShort);
  CHECK(e.tensor == "node0-offsets");
  CHECK(mentions(e,
                 "length is 4 but node0-offsets has 4 elements, enough for 3 entries of node0 "
                 "(ListOffsetArray)"));

  e = load(kJagged, "0", {{"node0-offsets", {Dtype::I64, 0}}, {"node1-data", {Dtype::I64, 6}}}, f);
  CHECK(e.code == ErrorCode::AwkwardBufferTooShort);
  CHECK(mentions(e, "at least one element"));

  // Through a record and a regular array: the limiting buffer is deep inside.
  const std::string rec = R"({"class": "RecordArray", "fields": ["x", "y"], "contents": [
      {"class": "NumpyArray", "primitive": "float64", "form_key": "node1"},
      {"class": "RegularArray", "size": 3, "content": {"class": "NumpyArray", "primitive": "uint8", "form_key": "node3"}, "form_key": "node2"}],
      "form_key": "node0"})";
  e = load(rec, "5", {{"node1-data", {Dtype::F64, 5}}, {"node3-data", {Dtype::U8, 14}}}, f);
  CHECK(e.code == ErrorCode::AwkwardBufferTooShort);
  CHECK(e.tensor == "node3-data");
  CHECK(mentions(e, "enough for 14 entries of node3"));
  CHECK_FALSE(
      load(rec, "5", {{"node1-data", {Dtype::F64, 5}}, {"node3-data", {Dtype::U8, 15}}}, f));

  // Bit masks hold 8 entries per byte.
  const std::string bits =
      R"({"class": "BitMaskedArray", "mask": "u8", "valid_when": true, "lsb_order": false,
      "content": {"class": "NumpyArray", "primitive": "bool", "form_key": "node1"}, "form_key": "node0"})";
  CHECK_FALSE(
      load(bits, "16", {{"node0-mask", {Dtype::U8, 2}}, {"node1-data", {Dtype::BOOL, 20}}}, f));
  e = load(bits, "17", {{"node0-mask", {Dtype::U8, 2}}, {"node1-data", {Dtype::BOOL, 20}}}, f);
  CHECK(e.tensor == "node0-mask");

  e = load(R"({"class": "RecordArray", "fields": ["e"], "contents": [{"class": "EmptyArray"}]})",
           "1", {}, f);
  CHECK(e.code == ErrorCode::AwkwardBufferTooShort);
  CHECK(mentions(e, "EmptyArray"));
}

TEST_CASE("offsets: checked against the content's capacity, in order", "[awkward]") {
  AkForm f;
  REQUIRE_FALSE(
      load(kJagged, "3", {{"node0-offsets", {Dtype::I64, 4}}, {"node1-data", {Dtype::I64, 6}}}, f));
  const int64_t good[] = {0, 2, 2, 6};
  CHECK_FALSE(checkAkOffsets(f, 0, good, 0, 4));
  CHECK_FALSE(checkAkOffsets(f, 0, good + 1, 1, 2));

  const int64_t past[] = {0, 2, 7};
  Error e = checkAkOffsets(f, 0, past, 1, 3);
  CHECK(e.code == ErrorCode::AwkwardOutOfBounds);
  CHECK(e.tensor == "node0-offsets");
  CHECK(e.offset == 1000 + 3 * 8);
  CHECK(mentions(e, "node0-offsets[3] = 7 is outside [0, 6]"));

  const int64_t decreasing[] = {0, 3, 2, 6};
  e = checkAkOffsets(f, 0, decreasing, 0, 4);
  CHECK(e.code == ErrorCode::AwkwardDecreasingOffsets);
  CHECK(e.offset == 1000 + 2 * 8);
  CHECK(mentions(e, "node0-offsets[2] = 2 is less than the offset before it, 3"));

  const int64_t negative[] = {-1, 0};
  CHECK(checkAkOffsets(f, 0, negative, 0, 2).code == ErrorCode::AwkwardOutOfBounds);

  // Asking for elements the buffer does not have, or for the wrong node, is refused too.
  CHECK(checkAkOffsets(f, 0, good, 1, 4).code == ErrorCode::AwkwardOutOfBounds);
  CHECK(checkAkOffsets(f, 1, good, 0, 1).code == ErrorCode::AwkwardInvalidForm);
  AkForm unchecked;
  REQUIRE_FALSE(parseAkForm(kJagged, "3", unchecked));
  CHECK(checkAkOffsets(unchecked, 0, good, 0, 1).code == ErrorCode::AwkwardInvalidForm);
}

TEST_CASE("offsets of every index dtype, unaligned", "[awkward]") {
  for (const char* type : {"i32", "u32"}) {
    AkForm f;
    const std::string form =
        std::string(R"({"class": "ListOffsetArray", "offsets": ")") + type +
        R"(", "content": {"class": "NumpyArray", "primitive": "int8", "form_key": "b"}, "form_key": "a"})";
    const Dtype dt = std::string(type) == "i32" ? Dtype::I32 : Dtype::U32;
    REQUIRE_FALSE(load(form, "2", {{"a-offsets", {dt, 3}}, {"b-data", {Dtype::I8, 5}}}, f));
    uint8_t bytes[1 + 12];
    const uint32_t values[] = {0, 5, 0xFFFFFFFFu};
    std::memcpy(bytes + 1, values, 12);
    CHECK_FALSE(checkAkOffsets(f, 0, bytes + 1, 0, 2));
    Error e = checkAkOffsets(f, 0, bytes + 1, 0, 3);
    CHECK(e.code == ErrorCode::AwkwardOutOfBounds);
    CHECK(mentions(e, dt == Dtype::I32 ? "= -1" : "= 4294967295"));
  }
}

TEST_CASE("starts and stops", "[awkward]") {
  AkForm f;
  const std::string form =
      R"({"class": "ListArray", "starts": "i64", "stops": "i64", "content": {"class": "NumpyArray", "primitive": "int8", "form_key": "c"}, "form_key": "l"})";
  REQUIRE_FALSE(load(
      form, "3",
      {{"l-starts", {Dtype::I64, 3}}, {"l-stops", {Dtype::I64, 3}}, {"c-data", {Dtype::I8, 4}}},
      f));
  const int64_t starts[] = {3, 100, 0};
  const int64_t stops[] = {4, 100, 2};
  CHECK_FALSE(checkAkLists(f, 0, starts, stops, 0, 3));  // an empty list may point anywhere
  const int64_t badStops[] = {2, 100, 2};
  Error e = checkAkLists(f, 0, starts, badStops, 0, 3);
  CHECK(e.code == ErrorCode::AwkwardDecreasingOffsets);
  CHECK(e.tensor == "l-stops");
  CHECK(mentions(e, "l-stops[0] = 2 is less than l-starts[0] = 3"));
  const int64_t farStops[] = {5, 100, 2};
  e = checkAkLists(f, 0, starts, farStops, 0, 3);
  CHECK(e.code == ErrorCode::AwkwardOutOfBounds);
  CHECK(e.tensor == "l-stops");
  const int64_t negStarts[] = {-1, 100, 0};
  e = checkAkLists(f, 0, negStarts, stops, 0, 3);
  CHECK(e.code == ErrorCode::AwkwardOutOfBounds);
  CHECK(e.tensor == "l-starts");
}

TEST_CASE("indexed and indexed-option index", "[awkward]") {
  AkForm f;
  const std::string indexed =
      R"({"class": "IndexedArray", "index": "i32", "content": {"class": "NumpyArray", "primitive": "int8", "form_key": "c"}, "form_key": "i"})";
  REQUIRE_FALSE(load(indexed, "3", {{"i-index", {Dtype::I32, 3}}, {"c-data", {Dtype::I8, 2}}}, f));
  const int32_t ok[] = {1, 0, 1};
  CHECK_FALSE(checkAkIndex(f, 0, ok, 0, 3));
  const int32_t missing[] = {1, -1, 1};
  Error e = checkAkIndex(f, 0, missing, 0, 3);
  CHECK(e.code == ErrorCode::AwkwardOutOfBounds);  // IndexedArray has no missing values
  CHECK(e.offset == 1000 + 4);
  const int32_t past[] = {2};
  e = checkAkIndex(f, 0, past, 2, 1);
  CHECK(e.code == ErrorCode::AwkwardOutOfBounds);
  CHECK(mentions(e, "i-index[2] = 2 is outside [0, 2)"));

  const std::string option =
      R"({"class": "IndexedOptionArray", "index": "i64", "content": {"class": "NumpyArray", "primitive": "int8", "form_key": "c"}, "form_key": "i"})";
  REQUIRE_FALSE(load(option, "3", {{"i-index", {Dtype::I64, 3}}, {"c-data", {Dtype::I8, 2}}}, f));
  const int64_t withNone[] = {1, -1, INT64_MIN};
  CHECK_FALSE(checkAkIndex(f, 0, withNone, 0, 3));
  const int64_t bad[] = {2};
  CHECK(checkAkIndex(f, 0, bad, 0, 1).code == ErrorCode::AwkwardOutOfBounds);
}

TEST_CASE("union tags and index", "[awkward]") {
  AkForm f;
  const std::string form = R"({"class": "UnionArray", "tags": "i8", "index": "i64", "contents": [
      {"class": "NumpyArray", "primitive": "int64", "form_key": "a"},
      {"class": "NumpyArray", "primitive": "bool", "form_key": "b"}], "form_key": "u"})";
  REQUIRE_FALSE(load(form, "4",
                     {{"u-tags", {Dtype::I8, 4}},
                      {"u-index", {Dtype::I64, 4}},
                      {"a-data", {Dtype::I64, 3}},
                      {"b-data", {Dtype::BOOL, 1}}},
                     f));
  const int8_t tags[] = {0, 1, 0, 0};
  const int64_t index[] = {0, 0, 1, 2};
  CHECK_FALSE(checkAkUnion(f, 0, tags, index, 0, 4));
  const int8_t badTags[] = {0, 2};
  Error e = checkAkUnion(f, 0, badTags, index, 0, 2);
  CHECK(e.code == ErrorCode::AwkwardOutOfBounds);
  CHECK(e.tensor == "u-tags");
  CHECK(mentions(e, "u-tags[1] = 2 is outside [0, 2)"));
  const int8_t negTag[] = {-1};
  CHECK(checkAkUnion(f, 0, negTag, index, 0, 1).tensor == "u-tags");
  const int64_t badIndex[] = {0, 1};  // content 1 holds one entry
  e = checkAkUnion(f, 0, tags, badIndex, 0, 2);
  CHECK(e.code == ErrorCode::AwkwardOutOfBounds);
  CHECK(e.tensor == "u-index");
  CHECK(mentions(e, "content 1, b (NumpyArray)"));
}

TEST_CASE("parameters survive into the tree", "[awkward]") {
  AkForm f;
  REQUIRE_FALSE(parseAkForm(
      R"({"class": "ListOffsetArray", "offsets": "i64", "content": {"class": "NumpyArray", "primitive": "uint8", "parameters": {"__array__": "char"}, "form_key": "node1"}, "parameters": {"__array__": "string", "note": [1, {"é": null}]}, "form_key": "node0"})",
      "0", f));
  const std::string tree = akFormTreeJson(f);
  CHECK(tree.find(R"("parameters":{"__array__":"string","note":[1,{"é":null}]})") !=
        std::string::npos);
  CHECK(tree.find(R"("capacity":null)") != std::string::npos);  // not checked yet
}

TEST_CASE("every prefix of a form, and every byte flipped, fails cleanly or parses", "[awkward]") {
  const std::string form =
      R"({"class": "ListOffsetArray", "offsets": "i64", "content": {"class": "RecordArray", "fields": ["x", "s"], "contents": [
      {"class": "IndexedOptionArray", "index": "i64", "content": {"class": "NumpyArray", "primitive": "float64", "inner_shape": [2], "form_key": "node3"}, "form_key": "node2"},
      {"class": "UnionArray", "tags": "i8", "index": "i64", "contents": [
        {"class": "ListArray", "starts": "u32", "stops": "u32", "content": {"class": "NumpyArray", "primitive": "int8", "form_key": "node6"}, "form_key": "node5"},
        {"class": "BitMaskedArray", "mask": "u8", "valid_when": false, "lsb_order": true, "content": {"class": "NumpyArray", "primitive": "bool", "form_key": "node8"}, "form_key": "node7"}], "form_key": "node4"}],
      "form_key": "node1"}, "form_key": "node0"})";
  const std::map<std::string, FakeTensor> file = {
      {"node0-offsets", {Dtype::I64, 3}}, {"node3-data", {Dtype::F64, 8}},
      {"node2-index", {Dtype::I64, 4}},   {"node4-tags", {Dtype::I8, 4}},
      {"node4-index", {Dtype::I64, 4}},   {"node5-starts", {Dtype::U32, 2}},
      {"node5-stops", {Dtype::U32, 2}},   {"node6-data", {Dtype::I8, 9}},
      {"node7-mask", {Dtype::U8, 1}},     {"node8-data", {Dtype::BOOL, 5}}};
  AkForm f;
  REQUIRE_FALSE(load(form, "2", file, f));
  for (size_t n = 0; n < form.size(); ++n) {
    // A fresh allocation of exactly n bytes, so ASan sees a read past the prefix.
    std::vector<char> prefix(form.begin(), form.begin() + static_cast<std::ptrdiff_t>(n));
    CHECK(load(std::string_view(prefix.data(), n), "2", file, f));
  }
  int parsed = 0;
  for (size_t i = 0; i < form.size(); ++i) {
    for (char c : {'"', '{', ']', '0', 'x'}) {
      std::string mutated = form;
      mutated[i] = c;
      if (!load(mutated, "2", file, f)) ++parsed;
    }
  }
  CHECK(parsed > 0);  // the point is that nothing crashes; some mutations stay valid
}
