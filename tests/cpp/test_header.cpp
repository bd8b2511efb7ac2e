// The header parser against docs/format.md, "Reader rules": one test per error code, each
// built from a byte literal and asserting all four parts of the Error; then the shapes a valid
// file may take; then every real-world file of the shared corpus.
//
// Offsets, as the parser reports them (absolute file offsets):
// - rules 1-3 (the length prefix): 0.
// - InvalidHeader: the first byte of the invalid UTF-8 sequence.
// - InvalidHeaderDeserialization: just past the token where parsing stopped, found with
//   past(header, token), numbers included: the lexer reads the character after a number to
//   see where it ends, and the parser steps back over it. Truncated JSON: the end of
//   the header. Duplicate tensor names and metadata keys are found after parsing: the start of
//   the header (8). A NUL after the object: the NUL itself.
// - InvalidOffset, ValidationOverflow, MisalignedSlice, TensorInvalidInfo: where the tensor's
//   data begins (8 + N + begin).
// - MetadataIncompleteBuffer: where the tensors' data ends (8 + N + end, UINT64_MAX past 2^64).
#include <catch.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "header.hpp"
#include "support.hpp"

using namespace st;
using namespace std::string_literals;
using st_test::makeFile;

namespace {

Error parseBytes(const std::vector<uint8_t>& file, Header& h) {
  return parseFile(file.data(), file.size(), file.size(), h);
}

Error parseText(const std::string& header, uint64_t dataBytes, Header& h) {
  return parseBytes(makeFile(header, dataBytes), h);
}

Error errorOf(const std::string& header, uint64_t dataBytes = 0) {
  Header h;
  return parseText(header, dataBytes, h);
}

// The absolute offset just past `token` in a file whose header is `header`. The token must
// occur exactly once, so a test cannot silently point at the wrong place; "" means the start
// of the header.
uint64_t past(const std::string& header, const std::string& token) {
  if (token.empty()) return 8;
  size_t at = header.find(token);
  REQUIRE(at != std::string::npos);
  REQUIRE(header.rfind(token) == at);
  return 8 + at + token.size();
}

std::vector<uint64_t> shapeOf(const Header& h, const TensorInfo& t) {
  return std::vector<uint64_t>(h.shape(t), h.shape(t) + t.rank);
}

std::vector<std::string> namesInFileOrder(const Header& h) {
  std::vector<std::string> names;
  for (const TensorInfo& t : h.tensors) names.emplace_back(h.name(t));
  return names;
}

}  // namespace

// Asserts code, tensor, offset and message at the caller's line. Codes compare by name so a
// failure prints something readable.
#define CHECK_ERROR(expr, expectedCode, tensorName, offsetValue, messageText)    \
  do {                                                                           \
    const Error err_ = (expr);                                                   \
    CHECK(std::string(errorCodeName(err_.code)) == errorCodeName(expectedCode)); \
    CHECK(err_.tensor == std::string(tensorName));                               \
    CHECK(err_.offset == static_cast<uint64_t>(offsetValue));                    \
    CHECK(err_.message == std::string(messageText));                             \
  } while (0)

// ---------------------------------------------------------------------------------------------
// Rules 1-3: the 8-byte length prefix.

TEST_CASE("HeaderTooSmall: a file shorter than 8 bytes", "[header][error]") {
  for (size_t size = 0; size < 8; ++size) {
    INFO("file of " << size << " bytes");
    std::vector<uint8_t> file(size, 0);
    Header h;
    CHECK_ERROR(
        parseBytes(file, h), ErrorCode::HeaderTooSmall, "", 0,
        "file is " + std::to_string(size) + " bytes, shorter than the 8-byte header length");
  }
  // The file is long enough but the caller passed fewer than 8 bytes of it.
  const uint8_t three[3] = {2, 0, 0};
  Header h;
  CHECK_ERROR(parseFile(three, 3, 100, h), ErrorCode::HeaderTooSmall, "", 0,
              "only 3 of the 8 header length bytes were given");
}

TEST_CASE("HeaderTooLarge: N above 100,000,000", "[header][error]") {
  // 100,000,001 = 0x05F5E101, little-endian.
  std::vector<uint8_t> file = {0x01, 0xE1, 0xF5, 0x05, 0, 0, 0, 0, '{', '}'};
  Header h;
  CHECK_ERROR(parseBytes(file, h), ErrorCode::HeaderTooLarge, "", 0,
              "header length 100000001 exceeds the limit of 100000000 bytes");

  // The largest N must not wrap around in 8 + N.
  std::vector<uint8_t> huge(8, 0xFF);
  CHECK_ERROR(parseBytes(huge, h), ErrorCode::HeaderTooLarge, "", 0,
              "header length 18446744073709551615 exceeds the limit of 100000000 bytes");

  // Exactly 100,000,000 is allowed: with too short a file it is the length that is wrong.
  std::vector<uint8_t> limit = {0x00, 0xE1, 0xF5, 0x05, 0, 0, 0, 0};
  CHECK_ERROR(parseBytes(limit, h), ErrorCode::InvalidHeaderLength, "", 0,
              "header of 100000000 bytes ends at file byte 100000008 but the file is 8 bytes");
  uint64_t n = 0;
  REQUIRE(!readHeaderLength(limit.data(), 8, 100000008, n));
  CHECK(n == 100000000);
}

// Kept out of the default run (several seconds under ASan); the native release suite runs it
// (ctest core_tests_slow).
TEST_CASE("a header of exactly 100,000,000 bytes parses", "[header][.][slow]") {
  std::string header = "{}" + std::string(kMaxHeaderLength - 2, ' ');
  Header h;
  Error e = parseText(header, 0, h);
  INFO(e.message);
  CHECK(!e);
  CHECK(h.headerLength == kMaxHeaderLength);
  CHECK(h.tensors.empty());
}

TEST_CASE("InvalidHeaderLength: 8 + N past the end", "[header][error]") {
  std::vector<uint8_t> file = makeFile("{}");
  file[0] = 10;  // claims 10 header bytes, the file has 2
  Header h;
  CHECK_ERROR(parseBytes(file, h), ErrorCode::InvalidHeaderLength, "", 0,
              "header of 10 bytes ends at file byte 18 but the file is 10 bytes");

  // The file is long enough but the caller passed only part of the header.
  std::vector<uint8_t> full = makeFile("{}        ");
  CHECK_ERROR(parseFile(full.data(), 12, full.size(), h), ErrorCode::InvalidHeaderLength, "", 0,
              "header of 10 bytes but only 4 were given");
}

// ---------------------------------------------------------------------------------------------
// Rule 4: UTF-8, checked over all N bytes before any JSON is read.

TEST_CASE("InvalidHeader: the header is not valid UTF-8", "[header][error]") {
  struct Case {
    const char* what;
    std::string header;
    size_t badAt;  // header byte of the sequence's first byte
    const char* badByte;
  };
  const std::string tail = R"(":{"dtype":"U8","shape":[],"data_offsets":[0,1]}})";
  const Case cases[] = {
      {"bad continuation", "{\"\xC3\x28" + tail, 2, "C3"},
      {"stray continuation byte", "{\"\x80" + tail, 2, "80"},
      {"overlong 2 bytes", "{\"\xC0\xAF" + tail, 2, "C0"},
      {"overlong 3 bytes", "{\"a\xE0\x80\xAF" + tail, 3, "E0"},
      {"overlong 4 bytes", "{\"\xF0\x80\x80\xAF" + tail, 2, "F0"},
      {"surrogate ED A0 80", "{\"\xED\xA0\x80" + tail, 2, "ED"},
      {"above U+10FFFF", "{\"\xF4\x90\x80\x80" + tail, 2, "F4"},
      {"F5 lead byte", "{\"\xF5\x80\x80\x80" + tail, 2, "F5"},
      {"FF byte", "{\"\xFF" + tail, 2, "FF"},
      {"sequence cut by a quote", "{\"\xE2\x82\"" + tail.substr(1), 2, "E2"},
      {"invalid byte in the padding", "{}   \xFF   ", 5, "FF"},
      {"sequence cut by the end of the header", "{}  \xF0\x9F\x98", 4, "F0"},
      // Rule 4 comes before rule 5: the JSON error earlier in the header does not matter.
      {"after a JSON error", "[} \xC3", 3, "C3"},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    CHECK_ERROR(errorOf(c.header, 1), ErrorCode::InvalidHeader, "", 8 + c.badAt,
                "header is not valid UTF-8: bad byte 0x"s + c.badByte + " at header byte " +
                    std::to_string(c.badAt));
  }
}

// ---------------------------------------------------------------------------------------------
// Rule 5: the JSON itself. Each header is valid except for the one defect under test, and
// comes with the data bytes it would need, so a parser that missed the defect would accept it.

namespace {

struct JsonCase {
  const char* what;
  std::string header;
  uint64_t dataBytes;
  std::string tensor;
  std::string at;  // the error's offset is past(header, at)
  std::string message;
};

void checkJsonCases(const std::vector<JsonCase>& cases) {
  for (const JsonCase& c : cases) {
    INFO(c.what << ": " << c.header);
    CHECK_ERROR(errorOf(c.header, c.dataBytes), ErrorCode::InvalidHeaderDeserialization, c.tensor,
                past(c.header, c.at), c.message);
  }
}

const std::string kParseError = "header is not valid JSON: [json.exception.parse_error.101] ";

}  // namespace

TEST_CASE("InvalidHeaderDeserialization: not JSON, or not an object", "[header][error]") {
  checkJsonCases({
      {"not JSON", "hello", 0, "", "h",
       kParseError + "parse error at line 1, column 1: syntax error while parsing value - "
                     "invalid literal; last read: 'h'"},
      {"empty header", "", 0, "", "",
       kParseError + "parse error at line 1, column 1: syntax error while parsing value - "
                     "unexpected end of input; expected '[', '{', or a literal"},
      {"only whitespace", "    ", 0, "", "    ",
       kParseError + "parse error at line 1, column 5: syntax error while parsing value - "
                     "unexpected end of input; expected '[', '{', or a literal"},
      {"truncated object", R"({"a":{"dtype":"F32")", 0, "", R"({"a":{"dtype":"F32")",
       kParseError + "parse error at line 1, column 20: syntax error while parsing object - "
                     "unexpected end of input; expected '}'"},
      {"a string", R"("abc")", 0, "", R"("abc")", "header is a string, not a JSON object"},
      {"a number", "42", 0, "", "42", "header is an integer, not a JSON object"},
      {"null", "null", 0, "", "null", "header is null, not a JSON object"},
      {"an array", "[]", 0, "", "[", "header is an array, not a JSON object"},
      {"an array holding the object", R"([{"a":1}])", 0, "", "[",
       "header is an array, not a JSON object"},
      {"a comment", R"({/**/})", 0, "", "{/",
       kParseError + "parse error at line 1, column 2: syntax error while parsing object key - "
                     "invalid literal; last read: '{/'; expected string literal"},
      {"single quotes", R"({'a':1})", 0, "", "{'",
       kParseError + "parse error at line 1, column 2: syntax error while parsing object key - "
                     "invalid literal; last read: '{''; expected string literal"},
      {"a trailing comma", R"({"a":{"dtype":"U8","shape":[],"data_offsets":[0,1]},})", 1, "", "},}",
       kParseError + "parse error at line 1, column 53: syntax error while parsing object key - "
                     "unexpected '}'; expected string literal"},
  });
}

TEST_CASE("InvalidHeaderDeserialization: a tensor entry of the wrong shape", "[header][error]") {
  checkJsonCases({
      {"entry is a string", R"({"a":"F32"})", 0, "a", R"("F32")",
       R"(tensor "a" is a string, not an object)"},
      {"entry is null", R"({"a":null})", 0, "a", "null", R"(tensor "a" is null, not an object)"},
      {"entry is a number", R"({"a":7})", 0, "a", "7",
       R"(tensor "a" is an integer, not an object)"},
      {"empty entry", R"({"a":{}})", 0, "a", "{}", R"(tensor "a" has no "dtype" field)"},
      {"missing dtype", R"({"a":{"shape":[1],"data_offsets":[0,4]}})", 4, "a", "[0,4]}",
       R"(tensor "a" has no "dtype" field)"},
      {"missing shape", R"({"a":{"dtype":"F32","data_offsets":[0,4]}})", 4, "a", "[0,4]}",
       R"(tensor "a" has no "shape" field)"},
      {"missing data_offsets", R"({"a":{"dtype":"F32","shape":[1]}})", 4, "a", "[1]}",
       R"(tensor "a" has no "data_offsets" field)"},
      {"dtype is a number", R"({"a":{"dtype":32,"shape":[1],"data_offsets":[0,4]}})", 4, "a", "32",
       R"(dtype of tensor "a" is an integer, not a dtype string)"},
      {"dtype is null", R"({"a":{"dtype":null,"shape":[1],"data_offsets":[0,4]}})", 4, "a", "null",
       R"(dtype of tensor "a" is null, not a dtype string)"},
      {"dtype is an array", R"({"a":{"dtype":["F32"],"shape":[1],"data_offsets":[0,4]}})", 4, "a",
       R"("dtype":[)", R"(dtype of tensor "a" is an array, not a dtype string)"},
      {"shape is a string", R"({"a":{"dtype":"F32","shape":"[1]","data_offsets":[0,4]}})", 4, "a",
       R"("[1]")", R"(shape of tensor "a" is a string, not an array of non-negative integers)"},
      {"shape is an object", R"({"a":{"dtype":"F32","shape":{},"data_offsets":[0,4]}})", 4, "a",
       R"("shape":{)",
       R"(shape of tensor "a" is an object, not an array of non-negative integers)"},
      {"shape is null", R"({"a":{"dtype":"F32","shape":null,"data_offsets":[0,4]}})", 4, "a",
       "null", R"(shape of tensor "a" is null, not an array of non-negative integers)"},
      {"shape is a number", R"({"a":{"dtype":"F32","shape":1,"data_offsets":[0,4]}})", 4, "a", "1",
       R"(shape of tensor "a" is an integer, not an array of non-negative integers)"},
      {"nested shape", R"({"a":{"dtype":"F32","shape":[[1]],"data_offsets":[0,4]}})", 4, "a", "[[",
       R"(shape of tensor "a" contains an array, not a non-negative integer)"},
      {"data_offsets is a string", R"({"a":{"dtype":"F32","shape":[1],"data_offsets":"0,4"}})", 4,
       "a", R"("0,4")",
       R"(data_offsets of tensor "a" is a string, not an array of non-negative integers)"},
      {"data_offsets is an object", R"({"a":{"dtype":"F32","shape":[1],"data_offsets":{}}})", 4,
       "a", R"("data_offsets":{)",
       R"(data_offsets of tensor "a" is an object, not an array of non-negative integers)"},
      {"object in data_offsets", R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,{}]}})", 4,
       "a", "[0,{", R"(data_offsets of tensor "a" contains an object, not a non-negative integer)"},
  });
}

TEST_CASE("InvalidHeaderDeserialization: unknown dtypes", "[header][error]") {
  checkJsonCases({
      {"unknown name", R"({"a":{"dtype":"F31","shape":[1],"data_offsets":[0,4]}})", 4, "a",
       R"("F31")", R"(unknown dtype "F31")"},
      {"lowercase", R"({"a":{"dtype":"f32","shape":[1],"data_offsets":[0,4]}})", 4, "a", R"("f32")",
       R"(unknown dtype "f32")"},
      {"lowercase bf16", R"({"a":{"dtype":"bf16","shape":[1],"data_offsets":[0,2]}})", 2, "a",
       R"("bf16")", R"(unknown dtype "bf16")"},
      {"trailing space", R"({"a":{"dtype":"F32 ","shape":[1],"data_offsets":[0,4]}})", 4, "a",
       R"("F32 ")", R"(unknown dtype "F32 ")"},
      {"empty", R"({"a":{"dtype":"","shape":[1],"data_offsets":[0,4]}})", 4, "a", R"("")",
       R"(unknown dtype "")"},
      {"F8 without variant", R"({"a":{"dtype":"F8","shape":[1],"data_offsets":[0,1]}})", 1, "a",
       R"("F8")", R"(unknown dtype "F8")"},
      {"F6 without variant", R"({"a":{"dtype":"F6","shape":[4],"data_offsets":[0,3]}})", 3, "a",
       R"("F6")", R"(unknown dtype "F6")"},
  });
}

TEST_CASE("InvalidHeaderDeserialization: numbers that are not plain non-negative integers",
          "[header][error]") {
  auto inShape = [](const std::string& number) {
    return R"({"a":{"dtype":"U8","shape":[)" + number + R"(],"data_offsets":[0,1]}})";
  };
  auto inOffsets = [](const std::string& number) {
    return R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,)" + number + "]}}";
  };
  const std::string shapeNot = R"(shape of tensor "a" contains )";
  const std::string offsetsNot = R"(data_offsets of tensor "a" contains )";
  const std::string notInt = ", not a non-negative integer";
  checkJsonCases({
      {"1.0 in shape", inShape("1.0"), 1, "a", "1.0", shapeNot + "a non-integer number" + notInt},
      {"1e0 in shape", inShape("1e0"), 1, "a", "1e0", shapeNot + "a non-integer number" + notInt},
      {"1E0 in shape", inShape("1E0"), 1, "a", "1E0", shapeNot + "a non-integer number" + notInt},
      {"-0 in shape", inShape("-0"), 1, "a", "-0", shapeNot + "a negative integer" + notInt},
      {"-1 in shape", inShape("-1"), 1, "a", "-1", shapeNot + "a negative integer" + notInt},
      {"true in shape", inShape("true"), 1, "a", "true", shapeNot + "a boolean" + notInt},
      {"null in shape", inShape("null"), 1, "a", "null", shapeNot + "null" + notInt},
      {"string in shape", inShape(R"("1")"), 1, "a", R"("1")", shapeNot + "a string" + notInt},
      {"2^64 in shape", inShape("18446744073709551616"), 1, "a", "18446744073709551616",
       shapeNot + "a non-integer number" + notInt},
      {"01 in shape", inShape("01"), 1, "", "[01",
       kParseError + "parse error at line 1, column 30: syntax error while parsing array - "
                     "unexpected number literal; expected ']'"},
      {"1.0 in data_offsets", inOffsets("1.0"), 1, "a", "1.0",
       offsetsNot + "a non-integer number" + notInt},
      {"1e0 in data_offsets", inOffsets("1e0"), 1, "a", "1e0",
       offsetsNot + "a non-integer number" + notInt},
      {"-0 in data_offsets", inOffsets("-0"), 1, "a", "-0",
       offsetsNot + "a negative integer" + notInt},
      {"-1 in data_offsets", inOffsets("-1"), 1, "a", "-1",
       offsetsNot + "a negative integer" + notInt},
      {"true in data_offsets", inOffsets("true"), 1, "a", "true",
       offsetsNot + "a boolean" + notInt},
      {"null in data_offsets", inOffsets("null"), 1, "a", "null", offsetsNot + "null" + notInt},
      {"01 in data_offsets", inOffsets("01"), 1, "", ",01",
       kParseError + "parse error at line 1, column 51: syntax error while parsing array - "
                     "unexpected number literal; expected ']'"},
      // The reference buffers every entry (serde flatten), so it parses even ignored numbers:
      // one beyond the double range fails there, and here.
      {"1e999 in an unknown field",
       R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1],"x":1e999}})", 1, "", "1e999",
       "header is not valid JSON: [json.exception.out_of_range.406] number overflow parsing "
       "'1e999'"},
      {"a leading +", inOffsets("+1"), 1, "", ",+",
       kParseError + "parse error at line 1, column 50: syntax error while parsing value - "
                     "invalid literal; last read: '0,+'"},
  });
}

TEST_CASE("InvalidHeaderDeserialization: data_offsets without exactly two elements",
          "[header][error]") {
  checkJsonCases({
      {"no elements", R"({"a":{"dtype":"U8","shape":[0],"data_offsets":[]}})", 0, "a",
       R"("data_offsets":[])", R"(data_offsets of tensor "a" has 0 elements, not 2)"},
      {"one element", R"({"a":{"dtype":"U8","shape":[0],"data_offsets":[0]}})", 0, "a",
       R"("data_offsets":[0])", R"(data_offsets of tensor "a" has 1 elements, not 2)"},
      {"three elements", R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1,1]}})", 1, "a",
       "1,1", "data_offsets has more than 2 elements"},
  });
}

TEST_CASE("InvalidHeaderDeserialization: anything but whitespace around the object",
          "[header][error]") {
  const std::string t = R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})";
  checkJsonCases({
      {"a trailing form feed", t + "\f", 1, "", t + "\f",
       kParseError + "parse error at line 1, column 54: syntax error while parsing value - "
                     "invalid literal; last read: '1]}}<U+000C>'; expected end of input"},
      {"a trailing vertical tab", t + "\v", 1, "", t + "\v",
       kParseError + "parse error at line 1, column 54: syntax error while parsing value - "
                     "invalid literal; last read: '1]}}<U+000B>'; expected end of input"},
      {"a trailing NBSP", t + "\xC2\xA0", 1, "", t + "\xC2",
       kParseError + "parse error at line 1, column 54: syntax error while parsing value - "
                     "invalid literal; last read: '1]}}\xC2'; expected end of input"},
      {"a trailing BOM", t + "\xEF\xBB\xBF", 1, "", t + "\xEF",
       kParseError + "parse error at line 1, column 54: syntax error while parsing value - "
                     "invalid literal; last read: '1]}}\xEF'; expected end of input"},
      {"a second object", t + "{}", 1, "", t + "{",
       kParseError + "parse error at line 1, column 54: syntax error while parsing value - "
                     "unexpected '{'; expected end of input"},
      {"a second object after spaces", t + "  {}", 1, "", t + "  {",
       kParseError + "parse error at line 1, column 56: syntax error while parsing value - "
                     "unexpected '{'; expected end of input"},
      {"a trailing comment", t + "//", 1, "", t + "/",
       kParseError + "parse error at line 1, column 54: syntax error while parsing value - "
                     "invalid literal; last read: '1]}}/'; expected end of input"},
      {"a trailing letter", "{} x", 0, "", "{} x",
       kParseError + "parse error at line 1, column 4: syntax error while parsing value - "
                     "invalid literal; last read: '{} x'; expected end of input"},
      {"a leading BOM", "\xEF\xBB\xBF{}", 0, "", "",
       "header starts with a byte order mark, which JSON does not allow"},
      {"a BOM after a space", " \xEF\xBB\xBF{}", 0, "", " \xEF",
       kParseError + "parse error at line 1, column 2: syntax error while parsing value - "
                     "invalid literal; last read: ' \xEF'"},
      {"a leading NBSP", "\xC2\xA0{}", 0, "", "\xC2",
       kParseError + "parse error at line 1, column 1: syntax error while parsing value - "
                     "invalid literal; last read: '\xC2'"},
      {"a leading form feed", "\f{}", 0, "", "\f",
       kParseError + "parse error at line 1, column 1: syntax error while parsing value - "
                     "invalid literal; last read: '<U+000C>'"},
  });
  // Runs of spaces are skipped eight at a time: whatever their length and wherever the run
  // ends, a byte that is no whitespace after it is still found, at its own offset.
  for (size_t spaces = 0; spaces <= 40; ++spaces) {
    for (const std::string& tail : {"x"s, "\tx"s, "\n  x"s, "\x01"s, "\0"s}) {
      const std::string header = t + std::string(spaces, ' ') + tail + std::string(spaces % 9, ' ');
      INFO(spaces << " spaces, then a tail of " << tail.size() << " bytes");
      const Error e = errorOf(header, 1);
      CHECK(e.code == ErrorCode::InvalidHeaderDeserialization);
      // The offset is past the byte the parser stopped at (nlohmann's count), a NUL's its own.
      const size_t stop = header.find_first_not_of(" \t\n", t.size());
      CHECK(e.offset == 8 + stop + (header[stop] == '\0' ? 0 : 1));
    }
    Header h;
    const std::string padded = R"({ )" + std::string(spaces, ' ') + R"("a":)" +
                               std::string(spaces, ' ') +
                               R"({"dtype":"U8","shape":[1],"data_offsets":[0,1]}})" +
                               std::string(spaces, ' ') + "\r\n\t " + std::string(spaces * 3, ' ');
    INFO(spaces << " spaces between tokens and after");
    REQUIRE(!parseText(padded, 1, h));
    CHECK(namesInFileOrder(h) == std::vector<std::string>{"a"});
  }
  // nlohmann's lexer reads a NUL as the end of input; the parser must not, or `{...}\0junk`
  // would be accepted. The offset is the NUL's own.
  for (const std::string& tail : {"\0"s, "\0junk"s, "  \0  "s}) {
    std::string header = t + tail;
    INFO("NUL after the object, tail of " << tail.size() << " bytes");
    CHECK_ERROR(errorOf(header, 1), ErrorCode::InvalidHeaderDeserialization, "",
                8 + header.find('\0'), "header has a NUL byte after the JSON object");
  }
  // Before or inside the object a NUL is a syntax error like any other byte.
  CHECK_ERROR(errorOf("\0{}"s), ErrorCode::InvalidHeaderDeserialization, "", 9,
              kParseError +
                  "parse error at line 1, column 1: syntax error while parsing value - "
                  "unexpected end of input; expected '[', '{', or a literal");
  CHECK_ERROR(errorOf("{\"a\0\":1}"s), ErrorCode::InvalidHeaderDeserialization, "", 12,
              kParseError +
                  "parse error at line 1, column 4: syntax error while parsing object "
                  "key - invalid string: control character U+0000 (NUL) must be escaped "
                  "to \\u0000; last read: '\"a<U+0000>'; expected string literal");
}

TEST_CASE("InvalidHeaderDeserialization: names and strings the lexer rejects", "[header][error]") {
  const std::string e = R"(":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})";
  checkJsonCases({
      {"a lone high surrogate", R"({"\ud800)" + e, 1, "", R"({"\ud800")",
       kParseError + "parse error at line 1, column 9: syntax error while parsing object key - "
                     "invalid string: surrogate U+D800..U+DBFF must be followed by "
                     "U+DC00..U+DFFF; last read: '\"\\ud800\"'; expected string literal"},
      {"a lone low surrogate", R"({"\udc00)" + e, 1, "", R"({"\udc00)",
       kParseError + "parse error at line 1, column 8: syntax error while parsing object key - "
                     "invalid string: surrogate U+DC00..U+DFFF must follow U+D800..U+DBFF; "
                     "last read: '\"\\udc00'; expected string literal"},
      {"an unknown escape", R"({"\x)" + e, 1, "", R"({"\x)",
       kParseError + "parse error at line 1, column 4: syntax error while parsing object key - "
                     "invalid string: forbidden character after backslash; last read: '\"\\x'; "
                     "expected string literal"},
      {"a raw tab", "{\"a\tb" + e, 1, "", "{\"a\t",
       kParseError + "parse error at line 1, column 4: syntax error while parsing object key - "
                     "invalid string: control character U+0009 (HT) must be escaped to \\u0009 or "
                     "\\t; last read: '\"a<U+0009>'; expected string literal"},
  });
}

TEST_CASE("InvalidHeaderDeserialization: duplicates", "[header][error]") {
  const std::string a = R"("a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]})";
  const std::string b = R"({"dtype":"U8","shape":[1],"data_offsets":[1,2]})";
  checkJsonCases({
      {"tensor name", "{" + a + R"(,"a":)" + b + "}", 2, "a", "", R"(duplicate tensor name "a")"},
      {"tensor name spelled with an escape", "{" + a + R"(,"\u0061":)" + b + "}", 2, "a", "",
       R"(duplicate tensor name "a")"},
      {"empty tensor name", R"({"":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"":)" + b + "}",
       2, "", "", R"(duplicate tensor name "")"},
      {"dtype", R"({"a":{"dtype":"U8","shape":[1],"dtype":"U8","data_offsets":[0,1]}})", 1, "a",
       R"([1],"dtype")", R"(duplicate field "dtype" in tensor "a")"},
      {"shape", R"({"a":{"shape":[1],"dtype":"U8","shape":[1],"data_offsets":[0,1]}})", 1, "a",
       R"("U8","shape")", R"(duplicate field "shape" in tensor "a")"},
      {"data_offsets",
       R"({"a":{"data_offsets":[0,1],"dtype":"U8","shape":[1],"data_offsets":[0,1]}})", 1, "a",
       R"([1],"data_offsets")", R"(duplicate field "data_offsets" in tensor "a")"},
      {"unknown field", R"({"a":{"x":1,"dtype":"U8","shape":[1],"data_offsets":[0,1],"x":2}})", 1,
       "a", R"([0,1],"x")", R"(duplicate field "x" in tensor "a")"},
      {"__metadata__", R"({"__metadata__":{},"__metadata__":{}})", 0, "", R"({},"__metadata__")",
       R"(duplicate key "__metadata__")"},
      {"__metadata__ null then an object", R"({"__metadata__":null,"__metadata__":{}})", 0, "",
       R"(null,"__metadata__")", R"(duplicate key "__metadata__")"},
      {"metadata key", R"({"__metadata__":{"k":"1","j":"2","k":"3"}})", 0, "", "",
       R"(duplicate metadata key "k")"},
  });
}

TEST_CASE("InvalidHeaderDeserialization: __metadata__ that is not a map of strings",
          "[header][error]") {
  checkJsonCases({
      {"a number value", R"({"__metadata__":{"k":1}})", 0, "", "1",
       R"(metadata value of "k" is an integer, not a string)"},
      {"a null value", R"({"__metadata__":{"k":null}})", 0, "", "null",
       R"(metadata value of "k" is null, not a string)"},
      {"a boolean value", R"({"__metadata__":{"k":false}})", 0, "", "false",
       R"(metadata value of "k" is a boolean, not a string)"},
      {"an object value", R"({"__metadata__":{"k":{}}})", 0, "", R"("k":{)",
       R"(metadata value of "k" is an object, not a string)"},
      {"an array value", R"({"__metadata__":{"k":["v"]}})", 0, "", R"("k":[)",
       R"(metadata value of "k" is an array, not a string)"},
      {"a string", R"({"__metadata__":"pt"})", 0, "", R"("pt")",
       "__metadata__ is a string, not an object or null"},
      {"an array", R"({"__metadata__":[]})", 0, "", "[",
       "__metadata__ is an array, not an object or null"},
      {"a number", R"({"__metadata__":0})", 0, "", "0",
       "__metadata__ is an integer, not an object or null"},
  });
}

TEST_CASE("InvalidHeaderDeserialization: the array and dtype-map forms, when malformed",
          "[header][error]") {
  checkJsonCases({
      {"two elements", R"({"a":["U8",[1]]})", 1, "a", "[1]]",
       R"(tensor "a" is an array of 2 elements, not [dtype, shape, data_offsets])"},
      {"no elements", R"({"a":[]})", 0, "a", "[]",
       R"(tensor "a" is an array of 0 elements, not [dtype, shape, data_offsets])"},
      {"a fourth array", R"({"a":["U8",[1],[0,1],[]]})", 1, "a", "[0,1],[",
       R"(tensor "a" has an array where no further element was expected)"},
      {"a fourth number", R"({"a":["U8",[1],[0,1],0]})", 1, "a", ",0",
       R"(tensor "a" has an integer at position 3 of its array form)"},
      {"a fourth string", R"({"a":["U8",[1],[0,1],"x"]})", 1, "a", R"("x")",
       R"(tensor "a" has a string at position 3 of its array form)"},
      {"shape first", R"({"a":[[1],"U8",[0,1]]})", 1, "a", "[[",
       R"(tensor "a" has an array where a dtype was expected)"},
      {"a string shape", R"({"a":["U8","1",[0,1]]})", 1, "a", R"("1")",
       R"(tensor "a" has a string at position 1 of its array form)"},
      {"an object for data_offsets", R"({"a":["U8",[1],{}]})", 1, "a", "[1],{",
       R"(tensor "a" has an object where an array was expected)"},
      {"empty dtype map", R"({"a":{"dtype":{},"shape":[1],"data_offsets":[0,1]}})", 1, "a", "{}",
       R"(dtype object of tensor "a" is empty)"},
      {"dtype map to a number", R"({"a":{"dtype":{"U8":1},"shape":[1],"data_offsets":[0,1]}})", 1,
       "a", R"("U8":1)", R"(dtype object of tensor "a" must map the dtype to null)"},
      {"dtype map to an object", R"({"a":{"dtype":{"U8":{}},"shape":[1],"data_offsets":[0,1]}})", 1,
       "a", R"("U8":{)", R"(dtype object of tensor "a" must map the dtype to null)"},
      {"dtype map with two keys",
       R"({"a":{"dtype":{"U8":null,"I8":null},"shape":[1],"data_offsets":[0,1]}})", 1, "a",
       R"("I8")", "unexpected key"},
      {"dtype map to an unknown dtype",
       R"({"a":{"dtype":{"u8":null},"shape":[1],"data_offsets":[0,1]}})", 1, "a", R"("u8")",
       R"(unknown dtype "u8")"},
  });
}

TEST_CASE("InvalidHeaderDeserialization: nesting deeper than 127", "[header][error]") {
  // Depth counts every open object and array, the top object included: the top object and the
  // entry are 2, so an unknown field nested `levels` deep reaches 2 + levels.
  auto nested = [](int levels, char open, char close) {
    std::string value;
    for (int i = 0; i < levels; ++i) value += open == '{' ? R"({"x":)" : "[";
    value += "0";
    for (int i = 0; i < levels; ++i) value += close;
    return R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1],"x":)" + value + "}}";
  };
  for (char open : {'[', '{'}) {
    char close = open == '[' ? ']' : '}';
    INFO("nesting with " << open);
    Header h;
    Error e = parseText(nested(125, open, close), 1, h);
    INFO(e.message);
    CHECK(!e);                                      // 127 deep
    std::string header = nested(126, open, close);  // 128 deep
    // The error sits just past the 126th opening bracket of the field's value.
    size_t at = header.find(R"("x":)") + 4;
    for (int i = 0; i < 126; ++i) at = header.find(open, at) + 1;
    CHECK_ERROR(errorOf(header, 1), ErrorCode::InvalidHeaderDeserialization, "a", 8 + at,
                "JSON nesting deeper than 127");
  }
}

// ---------------------------------------------------------------------------------------------
// Rules 6-10: the tensors against each other and against the file.

TEST_CASE("InvalidOffset: the tensors do not tile the buffer", "[header][error]") {
  SECTION("a gap") {
    std::string h = R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},)"
                    R"("b":{"dtype":"U8","shape":[4],"data_offsets":[8,12]}})";
    CHECK_ERROR(
        errorOf(h, 12), ErrorCode::InvalidOffset, "b", 8 + h.size() + 8,
        R"(tensor "b" data_offsets [8, 12]: begins at 8, expected 4 (tensors must tile the data buffer))");
  }
  SECTION("not starting at 0") {
    std::string h = R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[4,8]}})";
    CHECK_ERROR(
        errorOf(h, 8), ErrorCode::InvalidOffset, "a", 8 + h.size() + 4,
        R"(tensor "a" data_offsets [4, 8]: begins at 4, expected 0 (tensors must tile the data buffer))");
  }
  SECTION("an overlap, named by file order rather than header order") {
    std::string h = R"({"late":{"dtype":"U8","shape":[4],"data_offsets":[4,8]},)"
                    R"("first":{"dtype":"U8","shape":[8],"data_offsets":[0,8]}})";
    CHECK_ERROR(
        errorOf(h, 8), ErrorCode::InvalidOffset, "late", 8 + h.size() + 4,
        R"(tensor "late" data_offsets [4, 8]: begins at 4, expected 8 (tensors must tile the data buffer))");
  }
  SECTION("end before begin") {
    std::string h = R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},)"
                    R"("b":{"dtype":"U8","shape":[0],"data_offsets":[4,2]}})";
    CHECK_ERROR(errorOf(h, 4), ErrorCode::InvalidOffset, "b", 8 + h.size() + 4,
                R"(tensor "b" data_offsets [4, 2]: ends before it begins)");
  }
  SECTION("a zero-size tensor out of place") {
    std::string h = R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},)"
                    R"("z":{"dtype":"U8","shape":[0],"data_offsets":[2,2]}})";
    CHECK_ERROR(
        errorOf(h, 4), ErrorCode::InvalidOffset, "z", 8 + h.size() + 2,
        R"(tensor "z" data_offsets [2, 2]: begins at 2, expected 4 (tensors must tile the data buffer))");
  }
  SECTION("a begin above 2^64 - N - 8 saturates the offset") {
    std::string h =
        R"({"a":{"dtype":"U8","shape":[0],"data_offsets":[18446744073709551615,18446744073709551615]}})";
    CHECK_ERROR(
        errorOf(h), ErrorCode::InvalidOffset, "a", UINT64_MAX,
        R"(tensor "a" data_offsets [18446744073709551615, 18446744073709551615]: begins at 18446744073709551615, expected 0 (tensors must tile the data buffer))");
  }
}

TEST_CASE("ValidationOverflow: element or bit count past 64 bits", "[header][error]") {
  SECTION("element count") {
    std::string h = R"({"a":{"dtype":"U8","shape":[4294967296,4294967296],"data_offsets":[0,0]}})";
    CHECK_ERROR(errorOf(h), ErrorCode::ValidationOverflow, "a", 8 + h.size(),
                R"(tensor "a" shape [4294967296, 4294967296]: element count overflows 64 bits)");
  }
  SECTION("element count, before a zero dimension (the reference's left-to-right fold)") {
    std::string h =
        R"({"a":{"dtype":"U8","shape":[4294967296,4294967296,0],"data_offsets":[0,0]}})";
    CHECK_ERROR(errorOf(h), ErrorCode::ValidationOverflow, "a", 8 + h.size(),
                R"(tensor "a" shape [4294967296, 4294967296, 0]: element count overflows 64 bits)");
  }
  SECTION("bit count") {
    // 2^61 bytes is 2^64 bits.
    std::string h = R"({"a":{"dtype":"U8","shape":[2305843009213693952],"data_offsets":[0,0]}})";
    CHECK_ERROR(errorOf(h), ErrorCode::ValidationOverflow, "a", 8 + h.size(),
                R"(tensor "a" 2305843009213693952 elements of U8: bit count overflows 64 bits)");
  }
  SECTION("bit count of a sub-byte dtype") {
    std::string h = R"({"a":{"dtype":"F4","shape":[4611686018427387904],"data_offsets":[0,0]}})";
    CHECK_ERROR(errorOf(h), ErrorCode::ValidationOverflow, "a", 8 + h.size(),
                R"(tensor "a" 4611686018427387904 elements of F4: bit count overflows 64 bits)");
  }
}

TEST_CASE("MisalignedSlice: sub-byte tensors that are not whole bytes", "[header][error]") {
  struct Case {
    const char* dtype;
    const char* shape;
    const char* message;
  };
  const Case cases[] = {
      {"F4", "[3]", R"(tensor "a" 3 elements of F4 are 12 bits, not a whole number of bytes)"},
      {"F4", "[]", R"(tensor "a" 1 elements of F4 are 4 bits, not a whole number of bytes)"},
      {"F6_E2M3", "[2]",
       R"(tensor "a" 2 elements of F6_E2M3 are 12 bits, not a whole number of bytes)"},
      {"F6_E3M2", "[2,3]",
       R"(tensor "a" 6 elements of F6_E3M2 are 36 bits, not a whole number of bytes)"},
  };
  for (const Case& c : cases) {
    std::string h =
        R"({"a":{"dtype":")"s + c.dtype + R"(","shape":)" + c.shape + R"(,"data_offsets":[0,1]}})";
    INFO(h);
    CHECK_ERROR(errorOf(h, 1), ErrorCode::MisalignedSlice, "a", 8 + h.size(), c.message);
  }
}

TEST_CASE("TensorInvalidInfo: the byte span does not match the shape", "[header][error]") {
  std::string h = R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},)"
                  R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,8]}})";
  CHECK_ERROR(errorOf(h, 8), ErrorCode::TensorInvalidInfo, "b", 8 + h.size() + 4,
              R"(tensor "b" F32 [2] needs 8 bytes but data_offsets [4, 8] span 4)");
  std::string z = R"({"z":{"dtype":"F64","shape":[3,0],"data_offsets":[0,8]}})";
  CHECK_ERROR(errorOf(z, 8), ErrorCode::TensorInvalidInfo, "z", 8 + z.size(),
              R"(tensor "z" F64 [3, 0] needs 0 bytes but data_offsets [0, 8] span 8)");
  std::string f6 = R"({"f":{"dtype":"F6_E2M3","shape":[4],"data_offsets":[0,4]}})";
  CHECK_ERROR(errorOf(f6, 4), ErrorCode::TensorInvalidInfo, "f", 8 + f6.size(),
              R"(tensor "f" F6_E2M3 [4] needs 3 bytes but data_offsets [0, 4] span 4)");
}

TEST_CASE("MetadataIncompleteBuffer: the file does not end where the tensors do",
          "[header][error]") {
  std::string h = R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]}})";
  uint64_t end = 8 + h.size() + 4;
  CHECK_ERROR(errorOf(h, 5), ErrorCode::MetadataIncompleteBuffer, "", end,
              "tensors end at file byte " + std::to_string(end) + " but the file is " +
                  std::to_string(end + 1) + " bytes");
  CHECK_ERROR(errorOf(h, 3), ErrorCode::MetadataIncompleteBuffer, "", end,
              "tensors end at file byte " + std::to_string(end) + " but the file is " +
                  std::to_string(end - 1) + " bytes");
  CHECK_ERROR(errorOf("{}", 1), ErrorCode::MetadataIncompleteBuffer, "", 10,
              "tensors end at file byte 10 but the file is 11 bytes");

  // Eight tensors of 2^61 - 1 bytes end at 2^64 - 8: each is valid, 8 + N + end is not.
  std::string big = "{";
  const uint64_t size = (uint64_t{1} << 61) - 1;
  for (uint64_t i = 0; i < 8; ++i)
    big += (i ? "," : "") + R"("t)"s + std::to_string(i) + R"(":{"dtype":"U8","shape":[)" +
           std::to_string(size) + R"(],"data_offsets":[)" + std::to_string(i * size) + "," +
           std::to_string((i + 1) * size) + "]}";
  big += "}";
  CHECK_ERROR(errorOf(big), ErrorCode::MetadataIncompleteBuffer, "", UINT64_MAX,
              "tensors end at file byte past 2^64 but the file is " +
                  std::to_string(8 + big.size()) + " bytes");
}

TEST_CASE("errors follow the reference's rule order", "[header][error]") {
  // A gap (rule 6) in the first tensor wins over a size mismatch (rule 9) in the second.
  std::string h = R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]},)"
                  R"("b":{"dtype":"U8","shape":[9],"data_offsets":[2,3]}})";
  CHECK(errorOf(h, 3).code == ErrorCode::InvalidOffset);
  // Rules 7-9 run per tensor in file order: the first tensor's mismatch comes before the
  // second's overflow.
  std::string g = R"({"b":{"dtype":"U8","shape":[4294967296,4294967296],"data_offsets":[1,1]},)"
                  R"("a":{"dtype":"U8","shape":[2],"data_offsets":[0,1]}})";
  CHECK_ERROR(errorOf(g, 1), ErrorCode::TensorInvalidInfo, "a", 8 + g.size(),
              R"(tensor "a" U8 [2] needs 2 bytes but data_offsets [0, 1] span 1)");
  // A duplicate name (rule 5) wins over broken offsets (rule 6).
  std::string d = R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[5,6]},)"
                  R"("a":{"dtype":"U8","shape":[1],"data_offsets":[9,9]}})";
  CHECK(errorOf(d).code == ErrorCode::InvalidHeaderDeserialization);
}

// ---------------------------------------------------------------------------------------------
// Valid files.

TEST_CASE("a minimal file parses", "[header]") {
  Header h;
  std::string header = R"({"a":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]}})";
  Error e = parseText(header, 24, h);
  INFO(e.message);
  REQUIRE(!e);
  REQUIRE(h.tensors.size() == 1);
  CHECK(h.headerLength == header.size());
  CHECK(h.fileLength == 8 + header.size() + 24);
  CHECK(h.dataOffset() == 8 + header.size());
  CHECK(h.name(h.tensors[0]) == "a");
  CHECK(h.tensors[0].dtype == Dtype::F32);
  CHECK(shapeOf(h, h.tensors[0]) == std::vector<uint64_t>{2, 3});
  CHECK(h.elementCount(h.tensors[0]) == 6);
  CHECK(h.absoluteBegin(h.tensors[0]) == 8 + header.size());
  CHECK(h.find("a") == 0);
  CHECK(h.find("b") == -1);
  CHECK(!h.hasMetadata);
}

TEST_CASE("JSON whitespace around and inside the object", "[header]") {
  const char* variants[] = {
      " \t\n\r{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}} \t\n\r",
      "{ \"a\" : { \"dtype\" : \"U8\" , \"shape\" : [ 1 ] , \"data_offsets\" : [ 0 , 1 ] } }",
      "{\n\t\"a\":\r\n{\"dtype\":\"U8\",\n\"shape\":[\n1\n],\"data_offsets\":[0,\t1]\r}\n}",
      "{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}      ",  // padded to 8
      "{\"a\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}",        // unpadded, N = 55
  };
  for (const char* header : variants) {
    INFO(header);
    Header h;
    Error e = parseText(header, 1, h);
    INFO(e.message);
    REQUIRE(!e);
    REQUIRE(h.tensors.size() == 1);
    CHECK(h.name(h.tensors[0]) == "a");
    CHECK(h.dataOffset() == 8 + std::strlen(header));
  }
}

TEST_CASE("the empty file {}", "[header]") {
  for (const char* header : {"{}", "{}      ", "  {  }  "}) {
    Header h;
    Error e = parseText(header, 0, h);
    INFO(header << ": " << e.message);
    REQUIRE(!e);
    CHECK(h.tensors.empty());
    CHECK(h.byName.empty());
    CHECK(!h.hasMetadata);
    CHECK(h.find("") == -1);
  }
}

TEST_CASE("scalars and zero-size tensors", "[header]") {
  // Header order: the zero-size tensors share offsets with each other and with nonzero ones.
  std::string header = R"({"s":{"dtype":"F32","shape":[],"data_offsets":[0,4]},)"
                       R"("z2":{"dtype":"F64","shape":[2,0],"data_offsets":[4,4]},)"
                       R"("b":{"dtype":"BOOL","shape":[],"data_offsets":[4,5]},)"
                       R"("z1":{"dtype":"I64","shape":[0],"data_offsets":[4,4]},)"
                       R"("z3":{"dtype":"U8","shape":[0,3],"data_offsets":[5,5]},)"
                       R"("z0":{"dtype":"F4","shape":[0],"data_offsets":[0,0]}})";
  Header h;
  Error e = parseText(header, 5, h);
  INFO(e.message);
  REQUIRE(!e);
  // File order is by (begin, end); ties keep header order.
  CHECK(namesInFileOrder(h) == std::vector<std::string>{"z0", "s", "z2", "z1", "b", "z3"});
  const TensorInfo& s = h.tensors[h.find("s")];
  CHECK(s.rank == 0);
  CHECK(h.elementCount(s) == 1);
  const TensorInfo& z2 = h.tensors[h.find("z2")];
  CHECK(shapeOf(h, z2) == std::vector<uint64_t>{2, 0});
  CHECK(h.elementCount(z2) == 0);
  CHECK(z2.begin == z2.end);

  // A file of zero-size tensors only has no data.
  Header z;
  Error ez = parseText(R"({"a":{"dtype":"U8","shape":[0],"data_offsets":[0,0]},)"
                       R"("b":{"dtype":"U8","shape":[0],"data_offsets":[0,0]}})",
                       0, z);
  INFO(ez.message);
  CHECK(!ez);
  CHECK(namesInFileOrder(z) == std::vector<std::string>{"a", "b"});
}

TEST_CASE("every dtype, with its byte size", "[header]") {
  struct Row {
    const char* name;
    Dtype dtype;
    const char* shape;
    uint64_t bytes;
  };
  const Row rows[] = {
      {"BOOL", Dtype::BOOL, "[3]", 3},
      {"F4", Dtype::F4, "[2,3]", 3},
      {"F6_E2M3", Dtype::F6_E2M3, "[4]", 3},
      {"F6_E3M2", Dtype::F6_E3M2, "[8]", 6},
      {"U8", Dtype::U8, "[3]", 3},
      {"I8", Dtype::I8, "[3]", 3},
      {"F8_E5M2", Dtype::F8_E5M2, "[3]", 3},
      {"F8_E4M3", Dtype::F8_E4M3, "[3]", 3},
      {"F8_E8M0", Dtype::F8_E8M0, "[3]", 3},
      {"F8_E4M3FNUZ", Dtype::F8_E4M3FNUZ, "[3]", 3},
      {"F8_E5M2FNUZ", Dtype::F8_E5M2FNUZ, "[3]", 3},
      {"I16", Dtype::I16, "[3]", 6},
      {"U16", Dtype::U16, "[3]", 6},
      {"F16", Dtype::F16, "[3]", 6},
      {"BF16", Dtype::BF16, "[3]", 6},
      {"I32", Dtype::I32, "[3]", 12},
      {"U32", Dtype::U32, "[3]", 12},
      {"F32", Dtype::F32, "[3]", 12},
      {"C64", Dtype::C64, "[3]", 24},
      {"F64", Dtype::F64, "[3]", 24},
      {"I64", Dtype::I64, "[3]", 24},
      {"U64", Dtype::U64, "[3]", 24},
  };
  STATIC_REQUIRE(sizeof rows / sizeof rows[0] == kDtypeCount);
  std::string header = "{";
  uint64_t offset = 0;
  for (const Row& r : rows) {
    header += (offset ? ",\""s : "\""s) + r.name + R"(":{"dtype":")" + r.name + R"(","shape":)" +
              r.shape + R"(,"data_offsets":[)" + std::to_string(offset) + "," +
              std::to_string(offset + r.bytes) + "]}";
    offset += r.bytes;
  }
  header += "}";
  Header h;
  Error e = parseText(header, offset, h);
  INFO(e.message);
  REQUIRE(!e);
  REQUIRE(h.tensors.size() == kDtypeCount);
  for (size_t i = 0; i < h.tensors.size(); ++i) {
    CHECK(h.name(h.tensors[i]) == rows[i].name);
    CHECK(h.tensors[i].dtype == rows[i].dtype);
    CHECK(h.tensors[i].end - h.tensors[i].begin == rows[i].bytes);
  }
}

TEST_CASE("tensor names: escapes, non-ASCII, NUL and the empty name", "[header]") {
  struct Name {
    const char* json;  // as written in the header
    std::string decoded;
  };
  const Name names[] = {
      {R"(a\"b)", "a\"b"},
      {R"(a\\b)", "a\\b"},
      {R"(a\nb\t\r\b\f)", "a\nb\t\r\b\f"},
      {R"(a\u0000b)", "a\0b"s},
      {R"(a)", "a"},  // a prefix of "a\0b": distinct
      {R"(\u00e9\u4e2d)", "\xC3\xA9\xE4\xB8\xAD"},
      {R"(\ud83d\ude00)", "\xF0\x9F\x98\x80"},
      {"\xF0\x9F\x98\x81 raw \xE6\x97\xA5\xE6\x9C\xAC",
       "\xF0\x9F\x98\x81 raw \xE6\x97\xA5\xE6\x9C\xAC"},
      {R"(\/slash/)", "/slash/"},
      {"", ""},
      {"\x7F", "\x7F"},  // DEL needs no escape
  };
  std::string header = "{";
  uint64_t offset = 0;
  for (const Name& n : names) {
    header += (offset ? ",\""s : "\""s) + n.json +
              R"(":{"dtype":"U8","shape":[1],"data_offsets":[)" + std::to_string(offset) + "," +
              std::to_string(offset + 1) + "]}";
    ++offset;
  }
  header += "}";
  Header h;
  Error e = parseText(header, offset, h);
  INFO(e.message);
  REQUIRE(!e);
  REQUIRE(h.tensors.size() == std::size(names));
  for (size_t i = 0; i < std::size(names); ++i) {
    INFO("name " << i);
    CHECK(h.name(h.tensors[i]) == names[i].decoded);
    CHECK(h.find(names[i].decoded) == static_cast<int64_t>(i));
  }
  CHECK(h.find("a\0"s) == -1);
  // byName is sorted by bytes, so "" comes first and the 4-byte emoji after the 3-byte CJK.
  CHECK(h.name(h.tensors[h.byName.front()]) == "");
  CHECK(h.name(h.tensors[h.byName.back()]) == "\xF0\x9F\x98\x81 raw \xE6\x97\xA5\xE6\x9C\xAC");
}

TEST_CASE("__metadata__: absent, null, empty, anywhere in the object", "[header]") {
  const std::string t = R"("t":{"dtype":"U8","shape":[1],"data_offsets":[0,1]})";
  SECTION("null means absent") {
    Header h;
    Error e = parseText(R"({"__metadata__":null,)" + t + "}", 1, h);
    INFO(e.message);
    REQUIRE(!e);
    CHECK(!h.hasMetadata);
    CHECK(h.metadata.empty());
    CHECK(h.tensors.size() == 1);
  }
  SECTION("an empty map is present") {
    Header h;
    Error e = parseText(R"({"__metadata__":{}})", 0, h);
    INFO(e.message);
    REQUIRE(!e);
    CHECK(h.hasMetadata);
    CHECK(h.metadata.empty());
  }
  SECTION("first, middle or last; keys in header order; escapes decoded") {
    const std::string meta =
        R"("__metadata__":{"format":"pt","z":"h\u00e9llo \"q\"\n","":"","a\u0000":"\ud83d\ude00"})";
    const std::string t2 = R"("u":{"dtype":"U8","shape":[1],"data_offsets":[1,2]})";
    for (const std::string& header :
         {"{" + meta + "," + t + "," + t2 + "}", "{" + t + "," + meta + "," + t2 + "}",
          "{" + t + "," + t2 + "," + meta + "}"}) {
      INFO(header);
      Header h;
      Error e = parseText(header, 2, h);
      INFO(e.message);
      REQUIRE(!e);
      CHECK(h.hasMetadata);
      REQUIRE(h.metadata.size() == 4);
      CHECK(h.str(h.metadata[0].key) == "format");
      CHECK(h.str(h.metadata[0].value) == "pt");
      CHECK(h.str(h.metadata[1].key) == "z");
      CHECK(h.str(h.metadata[1].value) == "h\xC3\xA9llo \"q\"\n");
      CHECK(h.str(h.metadata[2].key) == "");
      CHECK(h.str(h.metadata[2].value) == "");
      CHECK(h.str(h.metadata[3].key) == "a\0"s);
      CHECK(h.str(h.metadata[3].value) == "\xF0\x9F\x98\x80");
      CHECK(namesInFileOrder(h) == std::vector<std::string>{"t", "u"});
      CHECK(h.find("__metadata__") == -1);
    }
  }
}

TEST_CASE("unknown fields in an entry are ignored, whatever they hold", "[header]") {
  std::string header =
      R"({"a":{"x":{"y":[1,{"z":null}],"w":"s","dtype":"BOGUS"},"dtype":"U8","n":-1.5e3,)"
      R"("shape":[2],"b":true,"data_offsets":[0,2],"l":[[],{},[[-0]]],"big":1e300,"s":"\u0000"}})";
  Header h;
  Error e = parseText(header, 2, h);
  INFO(e.message);
  REQUIRE(!e);
  REQUIRE(h.tensors.size() == 1);
  CHECK(h.tensors[0].dtype == Dtype::U8);
  CHECK(shapeOf(h, h.tensors[0]) == std::vector<uint64_t>{2});
}

TEST_CASE("many unknown fields in one entry parse in linear time", "[header]") {
  // Duplicate detection that compares every unknown field with every earlier one is quadratic:
  // a 1 MB header of 100,000 fields would take five billion comparisons.
  std::string header = R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1])";
  for (int i = 0; i < 100000; ++i) header += ",\"k" + std::to_string(i) + "\":0";
  header += "}}";
  Header h;
  Error e = parseText(header, 1, h);
  INFO(e.message);
  CHECK(!e);
}

TEST_CASE("entry fields in any order", "[header]") {
  std::string header = R"({"a":{"data_offsets":[0,8],"shape":[2],"dtype":"F32"},)"
                       R"("b":{"shape":[1],"data_offsets":[8,10],"dtype":"F16"},)"
                       R"("c":{"dtype":"I8","data_offsets":[10,13],"shape":[3]}})";
  Header h;
  Error e = parseText(header, 13, h);
  INFO(e.message);
  REQUIRE(!e);
  CHECK(namesInFileOrder(h) == std::vector<std::string>{"a", "b", "c"});
  CHECK(h.tensors[1].dtype == Dtype::F16);
  CHECK(shapeOf(h, h.tensors[2]) == std::vector<uint64_t>{3});
}

TEST_CASE("file order is offset order, not header order", "[header]") {
  std::string header = R"({"c":{"dtype":"U8","shape":[4],"data_offsets":[8,12]},)"
                       R"("a":{"dtype":"U8","shape":[4],"data_offsets":[4,8]},)"
                       R"("b":{"dtype":"U8","shape":[4],"data_offsets":[0,4]}})";
  Header h;
  Error e = parseText(header, 12, h);
  INFO(e.message);
  REQUIRE(!e);
  CHECK(namesInFileOrder(h) == std::vector<std::string>{"b", "a", "c"});
  CHECK(h.find("a") == 1);
  CHECK(h.find("b") == 0);
  CHECK(h.find("c") == 2);
  CHECK(h.absoluteBegin(h.tensors[h.find("c")]) == h.dataOffset() + 8);
}

TEST_CASE("offsets above 2^32, with only the header in memory", "[header]") {
  // parseFile reads only the 8 + N header bytes: the buffer holds those and nothing more.
  const uint64_t big = 5000000000;                // > 2^32
  const uint64_t huge = (uint64_t{1} << 61) - 1;  // the largest U8 tensor whose bits fit
  std::string header =
      R"({"w":{"dtype":"U8","shape":[5000000000],"data_offsets":[0,5000000000]},)"
      R"("b":{"dtype":"F32","shape":[1],"data_offsets":[5000000000,5000000004]},)"
      R"("h":{"dtype":"U8","shape":[2305843009213693951],"data_offsets":[5000000004,2305843014213693955]}})";
  std::vector<uint8_t> file = makeFile(header);
  const uint64_t fileLength = file.size() + big + 4 + huge;
  Header h;
  Error e = parseFile(file.data(), file.size(), fileLength, h);
  INFO(e.message);
  REQUIRE(!e);
  CHECK(h.fileLength == fileLength);
  CHECK(namesInFileOrder(h) == std::vector<std::string>{"w", "b", "h"});
  CHECK(h.tensors[0].end == big);
  CHECK(h.elementCount(h.tensors[0]) == big);
  CHECK(h.absoluteBegin(h.tensors[1]) == file.size() + big);
  CHECK(h.tensors[2].end - h.tensors[2].begin == huge);
}

TEST_CASE("the array form of an entry and the dtype map form", "[header]") {
  // serde's derive reads a struct from a JSON array and a unit enum variant from a one-key map
  // to null; the reference therefore accepts both.
  std::string header = R"({"a":["F32",[2],[0,8]],)"
                       R"("b":{"dtype":{"F16":null},"shape":[1],"data_offsets":[8,10]},)"
                       R"("c":[{"I8":null},[],[10,11]],)"
                       R"("d":[ "U8" , [ 1 , 1 ] , [ 11 , 12 ] ]})";
  Header h;
  Error e = parseText(header, 12, h);
  INFO(e.message);
  REQUIRE(!e);
  REQUIRE(h.tensors.size() == 4);
  CHECK(namesInFileOrder(h) == std::vector<std::string>{"a", "b", "c", "d"});
  CHECK(h.tensors[0].dtype == Dtype::F32);
  CHECK(shapeOf(h, h.tensors[0]) == std::vector<uint64_t>{2});
  CHECK(h.tensors[1].dtype == Dtype::F16);
  CHECK(h.tensors[2].dtype == Dtype::I8);
  CHECK(h.tensors[2].rank == 0);
  CHECK(shapeOf(h, h.tensors[3]) == std::vector<uint64_t>{1, 1});
}

TEST_CASE("the largest header length is readable", "[header]") {
  uint64_t n = 0;
  std::vector<uint8_t> prefix = {0x00, 0xE1, 0xF5, 0x05, 0, 0, 0, 0};
  REQUIRE(!readHeaderLength(prefix.data(), prefix.size(), 100000008, n));
  CHECK(n == kMaxHeaderLength);
}

TEST_CASE("findInvalidUtf8 on valid text", "[header]") {
  const std::string valid =
      "ascii \xC2\xA9 \xE2\x82\xAC \xED\x9F\xBF \xEE\x80\x80 \xF0\x90\x80\x80 \xF4\x8F\xBF\xBF";
  CHECK(findInvalidUtf8(reinterpret_cast<const uint8_t*>(valid.data()), valid.size()) ==
        valid.size());
  CHECK(findInvalidUtf8(nullptr, 0) == 0);
}

// ---------------------------------------------------------------------------------------------
// Real-world files: every file of the shared corpus, and the reference writer's own outputs.

TEST_CASE("every corpus file parses, with one tensor per non-metadata key", "[header][corpus]") {
  namespace fs = std::filesystem;
  const fs::path root = fs::path(ST_SOURCE_DIR) / ".." / "shared" / "corpus";
  std::error_code ec;
  if (!fs::is_directory(root, ec)) {
    WARN("no corpus at " << root.string() << ": skipped");
    return;
  }
  std::vector<fs::path> files;
  for (const fs::path& dir : {root, root / "reference"}) {
    if (!fs::is_directory(dir, ec)) continue;
    for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec))
      if (entry.path().extension() == ".safetensors") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  CHECK(!files.empty());
  for (const fs::path& path : files) {
    INFO(path.filename().string());
    bool ok = false;
    std::string bytes = st_test::readFileBytes(path.string(), ok);
    REQUIRE(ok);
    const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
    Header h;
    Error e = parseFile(data, bytes.size(), bytes.size(), h);
    INFO(errorCodeName(e.code) << ": " << e.message);
    REQUIRE(!e);
    // The core is built with JSON_NOEXCEPTION: parse without exceptions, check is_discarded.
    const char* json = bytes.data() + 8;
    nlohmann::json dom =
        nlohmann::json::parse(json, json + h.headerLength, nullptr, /*allow_exceptions=*/false);
    REQUIRE(!dom.is_discarded());
    REQUIRE(dom.is_object());
    size_t tensorKeys = 0;
    for (auto it = dom.begin(); it != dom.end(); ++it) {
      if (it.key() == "__metadata__") continue;
      ++tensorKeys;
      CHECK(h.find(it.key()) >= 0);
    }
    CHECK(h.tensors.size() == tensorKeys);
    CHECK(h.hasMetadata == (dom.contains("__metadata__") && dom["__metadata__"].is_object()));
  }
}
