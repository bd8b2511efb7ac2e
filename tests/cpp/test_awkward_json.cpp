// The awkward form's JSON, in and out: the form is read by nlohmann's SAX parser into a small
// tree of its own (awkward_form.cpp) and the tree for JS is written by hand (awkward_check.cpp).
// Both stand in for nlohmann's ordered_json DOM (json_tree.hpp says why); these pin what that
// DOM does: key order, repeated keys (first position, last value), the depth limit, dump()'s
// escaping and compact layout.
#include <catch.hpp>

#include <string>
#include <string_view>

#include "awkward.hpp"
#include "json_text.hpp"

using namespace st;

namespace {

std::string escaped(std::string_view s) {
  std::string out;
  appendJsonString(out, s);
  return out;
}

std::string treeOf(std::string_view form) {
  AkForm f;
  Error e = parseAkForm(form, "0", f);
  INFO(e.message);
  REQUIRE_FALSE(e);
  return akFormTreeJson(f);
}

Error formError(std::string_view form) {
  AkForm f;
  return parseAkForm(form, "0", f);
}

// The parameters of a one-node form's root, as the tree holds them.
std::string parametersOf(const std::string& parameters) {
  AkForm f;
  Error e = parseAkForm(R"({"class": "EmptyArray", "parameters": )" + parameters + "}", "0", f);
  INFO(e.message);
  REQUIRE_FALSE(e);
  return f.nodes[0].parameters;
}

std::string nested(int objects) {
  std::string s;
  for (int i = 1; i < objects; ++i) s += R"({"class": "RegularArray", "size": 1, "content": )";
  s += R"({"class": "EmptyArray"})";
  for (int i = 1; i < objects; ++i) s += "}";
  return s;
}

}  // namespace

TEST_CASE("JSON string escaping, as nlohmann's dump() without ensure_ascii", "[awkward]") {
  CHECK(escaped("") == R"("")");
  CHECK(escaped("plain") == R"("plain")");
  CHECK(escaped("a\"b\\c") == R"("a\"b\\c")");
  CHECK(escaped("\b\f\n\r\t") == R"("\b\f\n\r\t")");
  CHECK(escaped(std::string_view("\x00\x01\x1f", 3)) == R"("\u0000\u0001\u001f")");
  CHECK(escaped("/\x7f") == "\"/\x7f\"");  // neither '/' nor DEL is escaped
  CHECK(escaped("\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x98\x80") ==
        "\"\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x98\x80\"");  // é中😀 as they are
}

TEST_CASE("the tree: every class's keys, in order, escaped, compact", "[awkward]") {
  // Node names with a quote, a backslash, control characters and non-ASCII text.
  const std::string form =
      R"({"class": "RecordArray", "fields": ["a\"b", "c\\d", "e\u0001\n\t\u001f", "\u00e9中😀"], "contents": [
      {"class": "NumpyArray", "primitive": "float32", "inner_shape": [2, 3], "form_key": "k\"\\\u0000\b\f\r"},
      {"class": "RegularArray", "size": 4, "content": {"class": "EmptyArray"}, "form_key": "é"},
      {"class": "BitMaskedArray", "mask": "u8", "valid_when": false, "lsb_order": true, "content": {"class": "NumpyArray", "primitive": "bool", "form_key": "b1"}, "form_key": "b0"},
      {"class": "UnionArray", "tags": "i8", "index": "u32", "contents": [
        {"class": "ListArray", "starts": "i32", "stops": "i32", "content": {"class": "NumpyArray", "primitive": "int8", "form_key": "n"}, "form_key": "l"},
        {"class": "ByteMaskedArray", "mask": "i8", "valid_when": true, "content": {"class": "RecordArray", "fields": null, "contents": []}, "form_key": "m"}], "form_key": "u"}],
    "form_key": "r", "parameters": {"__record__": "P"}})";
  // What the ordered_json DOM's dump() wrote for this form, byte for byte.
  const std::string expected =
      R"({"length":0,"nodes":[)"
      R"({"class":"RecordArray","form_key":"r","parameters":{"__record__":"P"},"fields":["a\"b","c\\d","e\u0001\n\t\u001f","é中😀"],"buffers":{},"contents":[1,2,4,6],"capacity":null},)"
      R"({"class":"NumpyArray","form_key":"k\"\\\u0000\b\f\r","parameters":{},"primitive":"float32","dtype":"F32","inner_shape":[2,3],"buffers":{"data":"k\"\\\u0000\b\f\r-data"},"contents":[],"capacity":null},)"
      R"({"class":"RegularArray","form_key":"é","parameters":{},"size":4,"buffers":{},"contents":[3],"capacity":null},)"
      R"({"class":"EmptyArray","form_key":null,"parameters":{},"buffers":{},"contents":[],"capacity":null},)"
      R"({"class":"BitMaskedArray","form_key":"b0","parameters":{},"valid_when":false,"lsb_order":true,"mask":"u8","buffers":{"mask":"b0-mask"},"contents":[5],"capacity":null},)"
      R"({"class":"NumpyArray","form_key":"b1","parameters":{},"primitive":"bool","dtype":"BOOL","inner_shape":[],"buffers":{"data":"b1-data"},"contents":[],"capacity":null},)"
      R"({"class":"UnionArray","form_key":"u","parameters":{},"tags":"i8","index":"u32","buffers":{"tags":"u-tags","index":"u-index"},"contents":[7,9],"capacity":null},)"
      R"({"class":"ListArray","form_key":"l","parameters":{},"starts":"i32","stops":"i32","buffers":{"starts":"l-starts","stops":"l-stops"},"contents":[8],"capacity":null},)"
      R"({"class":"NumpyArray","form_key":"n","parameters":{},"primitive":"int8","dtype":"I8","inner_shape":[],"buffers":{"data":"n-data"},"contents":[],"capacity":null},)"
      R"({"class":"ByteMaskedArray","form_key":"m","parameters":{},"valid_when":true,"mask":"i8","buffers":{"mask":"m-mask"},"contents":[10],"capacity":null},)"
      R"({"class":"RecordArray","form_key":null,"parameters":{},"fields":null,"buffers":{},"contents":[],"capacity":null}]})";
  CHECK(treeOf(form) == expected);
  // The same names were read (decoded) from the form.
  AkForm f;
  REQUIRE_FALSE(parseAkForm(form, "0", f));
  CHECK(f.nodes[0].fields[2] == "e\x01\n\t\x1f");
  CHECK(f.nodes[1].formKey == std::string("k\"\\\0\b\f\r", 7));
}

TEST_CASE("the tree of an empty form list and of a checked form", "[awkward]") {
  CHECK(akFormTreeJson(AkForm{}) == R"({"length":0,"nodes":[]})");
  AkForm f;
  REQUIRE_FALSE(parseAkForm(R"({"class": "RecordArray", "fields": [], "contents": []})", "7", f));
  REQUIRE_FALSE(checkAkBuffers(f));
  CHECK(
      akFormTreeJson(f) ==
      R"({"length":7,"nodes":[{"class":"RecordArray","form_key":null,"parameters":{},"fields":[],"buffers":{},"contents":[],"capacity":null}]})");
}

TEST_CASE("parameters: compact, keys in source order, each key once", "[awkward]") {
  CHECK(parametersOf("null") == "{}");
  CHECK(parametersOf(" { } ") == "{}");
  // Source order, not sorted; whitespace dropped; nested containers kept.
  CHECK(parametersOf(R"({ "z" : 1 , "a" : [ [ ] , { } , { "y" : null } ] , "m" : true })") ==
        R"({"z":1,"a":[[],{},{"y":null}],"m":true})");
  // A repeated key: once, at its first position, with its last value (as ordered_json held
  // it, and as JSON.parse reads the original text), at every level.
  CHECK(parametersOf(R"({"z": 1, "a": 2, "z": {"y": 1, "x": 2, "y": 3}})") ==
        R"({"z":{"y":3,"x":2},"a":2})");
  // Strings decoded, then escaped as dump() escapes.
  CHECK(parametersOf(R"({"\u00e9\/": "\u0041\ud83d\ude00\u0000\u001F\"\\"})") ==
        "{\"\xC3\xA9/\":\"A\xF0\x9F\x98\x80\\u0000\\u001f\\\"\\\\\"}");
  // Integers as decimal (-0 is the integer 0); other numbers keep their source text.
  CHECK(
      parametersOf(
          R"({"a": [-0, 18446744073709551615, -9223372036854775808, 18446744073709551616, 1E2, 1.50, -0.0]})") ==
      R"({"a":[0,18446744073709551615,-9223372036854775808,18446744073709551616,1E2,1.50,-0.0]})");
  // __array__: the last value of the key counts.
  AkForm f;
  REQUIRE_FALSE(parseAkForm(
      R"({"class": "NumpyArray", "primitive": "uint8", "form_key": "a", "parameters": {"__array__": 5, "__array__": "char"}})",
      "0", f));
  CHECK(f.nodes[0].array == "char");
  CHECK(f.nodes[0].parameters == R"({"__array__":"char"})");
  Error e = formError(
      R"({"class": "NumpyArray", "primitive": "int8", "form_key": "a", "parameters": {"__array__": "char", "__array__": 5}})");
  CHECK_FALSE(e);
}

TEST_CASE("repeated keys in a form: first position, last value", "[awkward]") {
  CHECK(formError(R"({"class": "VirtualArray", "class": "EmptyArray"})").code == ErrorCode::Ok);
  Error e = formError(R"({"class": "EmptyArray", "class": "VirtualArray"})");
  CHECK(e.code == ErrorCode::AwkwardInvalidForm);
  CHECK(e.message.find("unknown class \"VirtualArray\"") != std::string::npos);
  e = formError(
      R"({"class": "RegularArray", "size": 3, "size": -1, "content": {"class": "EmptyArray"}})");
  CHECK(e.message.find("\"size\"") != std::string::npos);
  CHECK_FALSE(formError(
      R"({"class": "RegularArray", "size": -1, "size": 3, "content": {"class": "EmptyArray"}})"));
  // Old-style record contents: a repeated field stays at its first position, with its last form.
  AkForm f;
  REQUIRE_FALSE(parseAkForm(
      R"({"class": "RecordArray", "contents": {"y": {"class": "NumpyArray", "primitive": "int8", "form_key": "b"},
      "x": {"class": "NumpyArray", "primitive": "int8", "form_key": "a"}, "y": {"class": "NumpyArray", "primitive": "int16", "form_key": "c"}}})",
      "0", f));
  CHECK(f.nodes[0].fields == std::vector<std::string>{"y", "x"});
  REQUIRE(f.nodes.size() == 3);
  CHECK(f.nodes[f.nodes[0].contents[0]].formKey == "c");
  CHECK(f.nodes[f.nodes[0].contents[1]].formKey == "a");
  REQUIRE(f.buffers.size() == 2);
  CHECK(f.buffers[0].name == "c-data");
  CHECK(f.buffers[0].dtype == Dtype::I16);
  // "fields" given twice: the last list counts.
  REQUIRE_FALSE(parseAkForm(
      R"({"class": "RecordArray", "fields": ["a", "b"], "fields": ["c"], "contents": [{"class": "EmptyArray"}]})",
      "0", f));
  CHECK(f.nodes[0].fields == std::vector<std::string>{"c"});
}

TEST_CASE("the depth limit: 128 containers, wherever they are", "[awkward]") {
  CHECK_FALSE(formError(nested(kAkMaxJsonDepth)));
  Error e = formError(nested(kAkMaxJsonDepth + 1));
  CHECK(e.code == ErrorCode::AwkwardInvalidForm);
  CHECK(e.message == "awkward form: JSON nested deeper than 128");
  // Containers inside parameters count as well: the root and parameters objects and 126 arrays.
  auto withArrays = [](int n) {
    return R"({"class": "EmptyArray", "parameters": {"a": )" + std::string(n, '[') +
           std::string(n, ']') + "}}";
  };
  CHECK_FALSE(formError(withArrays(kAkMaxJsonDepth - 2)));
  CHECK(formError(withArrays(kAkMaxJsonDepth - 1)).message ==
        "awkward form: JSON nested deeper than 128");
  // Deep and not JSON: not JSON wins, wherever the syntax error is (the parse goes on).
  std::string deepThenBroken = nested(kAkMaxJsonDepth + 10);
  deepThenBroken.back() = ',';
  CHECK(formError(deepThenBroken).message == "awkward form: not valid JSON");
  CHECK(formError(nested(kAkMaxJsonDepth + 10) + " x").message == "awkward form: not valid JSON");
  CHECK(formError(nested(kAkMaxJsonDepth) + " x").message == "awkward form: not valid JSON");
  CHECK(formError("").message == "awkward form: not valid JSON");
}
