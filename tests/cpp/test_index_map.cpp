// index_map.hpp: a sharded index parsed in chunks of any size. Every verdict of js/sharded.js's
// parseIndex (JSON.parse of the fatally decoded text, then its checks) and the checks it adds,
// each with its code, offset and tensor; the same result wherever the chunks split; names,
// shard order and lookups over a generated index of 500,000 names as the largest models have.
#include <catch.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "index_map.hpp"

using namespace st;

namespace {

struct Parsed {
  bool ok = false;
  ErrorCode code = ErrorCode::Ok;
  uint64_t offset = 0;
  std::string tensor, message, metadata;
  std::vector<std::string> shards;  // path order
  std::vector<std::string> names;   // names order (grouped by shard)
  std::vector<int32_t> shardOfNames;
  std::vector<uint32_t> firstNames, nameCounts;
  uint64_t bytesInUse = 0;

  bool operator==(const Parsed& o) const {
    return ok == o.ok && code == o.code && offset == o.offset && tensor == o.tensor &&
           message == o.message && metadata == o.metadata && shards == o.shards &&
           names == o.names && shardOfNames == o.shardOfNames;
  }
};

// The UTF-16 code units of valid UTF-8.
std::u16string utf16(const std::string& s) {
  std::u16string out;
  for (size_t i = 0; i < s.size();) {
    const uint8_t b = static_cast<uint8_t>(s[i]);
    const int n = b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
    uint32_t u = n == 1 ? b : b & (0x3F >> (n - 1));
    for (int k = 1; k < n; ++k) u = u << 6 | (static_cast<uint8_t>(s[i + k]) & 0x3F);
    if (u >= 0x10000) {
      out += static_cast<char16_t>(0xD800 + ((u - 0x10000) >> 10));
      out += static_cast<char16_t>(0xDC00 + ((u - 0x10000) & 0x3FF));
    } else {
      out += static_cast<char16_t>(u);
    }
    i += n;
  }
  return out;
}

Parsed collect(IndexParser& p, bool ok) {
  Parsed r;
  r.ok = ok;
  r.code = p.error().code;
  r.offset = p.error().offset;
  r.tensor = p.error().tensor;
  r.message = p.error().message;
  if (!ok) return r;
  r.metadata = std::string(p.metadata());
  for (uint32_t i = 0; i < p.shardCount(); ++i) r.shards.emplace_back(p.shardPath(i));
  const auto* words = reinterpret_cast<const uintptr_t*>(p.tables());
  REQUIRE(words[kIndexCount] == p.count());
  REQUIRE(words[kIndexShardCount] == p.shardCount());
  const auto* shardWords = reinterpret_cast<const uint32_t*>(words[kIndexShards]);
  const auto* paths = reinterpret_cast<const char*>(words[kIndexPaths]);
  for (uint32_t i = 0; i < p.shardCount(); ++i) {
    const uint32_t* w = shardWords + i * kShardWords;
    REQUIRE(std::string(paths + w[kShardPathOffset], w[kShardPathLength]) == r.shards[i]);
    r.firstNames.push_back(w[kShardFirstName]);
    r.nameCounts.push_back(w[kShardNameCount]);
  }
  std::string blob(p.namesLength(), '\0');
  std::vector<uint32_t> ends(p.count());
  p.namesInto(reinterpret_cast<uint8_t*>(&blob[0]), ends.data());
  // Split as JS does: the blob decoded to UTF-16 once, each name up to its end.
  const std::u16string units = utf16(blob);
  size_t byte = 0, unit = 0;
  for (uint32_t end : ends) {
    std::string name;
    while (unit < end) {
      const uint8_t b = static_cast<uint8_t>(blob[byte]);
      const int n = b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
      name.append(blob, byte, n);
      byte += n;
      unit += n == 4 ? 2 : 1;
    }
    REQUIRE(unit == end);
    r.names.push_back(name);
    r.shardOfNames.push_back(p.shardOf(name));
  }
  REQUIRE(unit == units.size());
  REQUIRE(byte == blob.size());
  r.bytesInUse = p.bytesInUse();
  return r;
}

// Parses text fed in pieces ending at `cuts` (increasing offsets), then finish().
Parsed parse(const std::string& text, const std::vector<size_t>& cuts = {}) {
  IndexParser p;
  const auto* bytes = reinterpret_cast<const uint8_t*>(text.data());
  size_t from = 0;
  bool ok = true;
  for (size_t cut : cuts) {
    ok = ok && p.feed(bytes + from, cut - from);
    from = cut;
  }
  ok = ok && p.feed(bytes + from, text.size() - from);
  ok = ok && p.finish();
  return collect(p, ok);
}

Parsed failing(const std::string& text, ErrorCode code = ErrorCode::InvalidIndex) {
  const Parsed r = parse(text);
  INFO(text.substr(0, 200));
  INFO(r.message);
  CHECK_FALSE(r.ok);
  CHECK(r.code == code);
  return r;
}

// Every split into two chunks, and every byte alone, parse as the whole text does.
void checkSplits(const std::string& text, bool valid) {
  const Parsed whole = parse(text);
  REQUIRE(whole.ok == valid);
  for (size_t cut = 0; cut <= text.size(); ++cut) {
    INFO("cut at " << cut << " of " << text);
    REQUIRE(parse(text, {cut}) == whole);
  }
  std::vector<size_t> everyByte;
  for (size_t i = 1; i < text.size(); ++i) everyByte.push_back(i);
  REQUIRE(parse(text, everyByte) == whole);
}

const std::string kSmall =
    "{\"metadata\": {\"total_size\": 4305, \"nested\": [1, -2.5e+3, true, null, \"\\u00e9\"]},\n"
    " \"weight_map\": {\n"
    "  \"model.layers.1.w\": \"model-00002-of-00002.safetensors\",\n"
    "  \"model.layers.0.w\": \"model-00001-of-00002.safetensors\",\n"
    "  \"model.embed\": \"model-00001-of-00002.safetensors\",\n"
    "  \"lm_head\": \"model-00002-of-00002.safetensors\"\n"
    " }}";

}  // namespace

TEST_CASE("a small index: metadata, shards in path order, names grouped by shard, lookups") {
  const Parsed r = parse(kSmall);
  REQUIRE(r.ok);
  CHECK(r.metadata == "{\"total_size\": 4305, \"nested\": [1, -2.5e+3, true, null, \"\\u00e9\"]}");
  CHECK(r.shards == std::vector<std::string>{"model-00001-of-00002.safetensors",
                                             "model-00002-of-00002.safetensors"});
  CHECK(r.names ==
        std::vector<std::string>{"model.layers.0.w", "model.embed", "model.layers.1.w", "lm_head"});
  CHECK(r.shardOfNames == std::vector<int32_t>{0, 0, 1, 1});
  CHECK(r.firstNames == std::vector<uint32_t>{0, 2});
  CHECK(r.nameCounts == std::vector<uint32_t>{2, 2});

  IndexParser p;
  REQUIRE(p.feed(reinterpret_cast<const uint8_t*>(kSmall.data()), kSmall.size()));
  REQUIRE(p.finish());
  CHECK(p.shardOf("lm_head") == 1);
  CHECK(p.shardOf("lm_hea") == -1);
  CHECK(p.shardOf("lm_headx") == -1);
  CHECK(p.shardOf("") == -1);
  CHECK(p.finish());  // again: still done
  CHECK_FALSE(p.feed(reinterpret_cast<const uint8_t*>("x"), 1));
  CHECK(p.error().code == ErrorCode::InvalidIndex);
}

TEST_CASE("metadata: absent or null gives none; other top-level keys hold any value") {
  CHECK(parse("{\"weight_map\": {}}").metadata.empty());
  const Parsed null = parse("{\"metadata\" : null , \"weight_map\": {\"a\": \"s\"}}");
  REQUIRE(null.ok);
  CHECK(null.metadata.empty());
  CHECK(null.names == std::vector<std::string>{"a"});
  const Parsed other = parse(
      "{\"format\": [{\"a\": [[], {}, 0, -0.0, 1E5, 1e-7, false]}, \"\\ud800 lone is fine here\"], "
      "\"weight_map\": {}, \"x\": 12, \"y\": {\"weight_map\": 5}}");
  REQUIRE(other.ok);
  CHECK(other.names.empty());
  CHECK(other.shards.empty());
  // "weight\u005fmap" is weight_map to JSON.parse too.
  CHECK(parse("{\"weight\\u005fmap\": {\"a\": \"s\"}}").names == std::vector<std::string>{"a"});
}

TEST_CASE("escapes in names and shard paths are decoded; names keep their UTF-16 lengths") {
  const std::string text =
      "{\"weight_map\": {\"q\\\"\\\\\\/\\b\\f\\n\\r\\t\": \"a.safetensors\", "
      "\"\\u0041\\u00e9\\u65e5\\ud83d\\ude00\": \"\\u0062.safetensors\", "
      "\"raw \xc3\xa9\xe6\x97\xa5\xf0\x9f\x98\x80\": \"a.safetensors\", \"nul\\u0000\": "
      "\"b.safetensors\"}}";
  const Parsed r = parse(text);
  REQUIRE(r.ok);
  CHECK(r.shards == std::vector<std::string>{"a.safetensors", "b.safetensors"});
  CHECK(r.names ==
        std::vector<std::string>{"q\"\\/\b\f\n\r\t", "raw \xc3\xa9\xe6\x97\xa5\xf0\x9f\x98\x80",
                                 "A\xc3\xa9\xe6\x97\xa5\xf0\x9f\x98\x80", std::string("nul\0", 4)});
  checkSplits(text, true);
}

TEST_CASE("shard paths sort as JS sorts strings; unpadded shard numbers are plain strings") {
  const Parsed r = parse(
      "{\"weight_map\": {\"a\": \"model-2-of-61.safetensors\", \"b\": "
      "\"model-10-of-61.safetensors\", "
      "\"c\": \"model-1-of-61.safetensors\", \"d\": \"model-2-of-61.safetensors\"}}");
  REQUIRE(r.ok);
  CHECK(r.shards == std::vector<std::string>{"model-1-of-61.safetensors",
                                             "model-10-of-61.safetensors",
                                             "model-2-of-61.safetensors"});
  CHECK(r.names == std::vector<std::string>{"c", "b", "a", "d"});
  CHECK(r.shardOfNames == std::vector<int32_t>{0, 1, 2, 2});
  // U+FF5E (EF BD 9E) sorts after U+1F600 (F0 9F 98 80) in UTF-16 though not in UTF-8.
  const Parsed wide = parse(
      "{\"weight_map\": {\"a\": \"\xef\xbd\x9e.st\", \"b\": \"\xf0\x9f\x98\x80.st\", \"c\": "
      "\"z.st\"}}");
  CHECK(wide.shards == std::vector<std::string>{"z.st", "\xf0\x9f\x98\x80.st", "\xef\xbd\x9e.st"});
}

TEST_CASE("utf16Less orders UTF-8 strings by their UTF-16 code units") {
  std::mt19937 rng(5);
  static const char* const kPieces[] = {"a",
                                        "z",
                                        "\xc3\xa9",
                                        "\xed\x9f\xbf",
                                        "\xee\x80\x80",
                                        "\xef\xbf\xbd",
                                        "\xf0\x9f\x98\x80",
                                        "\xf4\x8f\xbf\xbf",
                                        ""};
  for (int round = 0; round < 20000; ++round) {
    std::string a, b;
    for (int n = rng() % 4; n > 0; --n) a += kPieces[rng() % 9];
    b = rng() % 2 ? a : std::string();
    for (int n = rng() % 4; n > 0; --n) b += kPieces[rng() % 9];
    INFO(a << " vs " << b);
    CHECK(utf16Less(a, b) == (utf16(a) < utf16(b)));
  }
}

TEST_CASE("safeShardPath follows js/sharded.js checkShardPath") {
  for (const char* ok : {"model-00001-of-00002.safetensors", "model-1-of-61.safetensors",
                         "sub/dir/x.safetensors", "a.b", "...", "%2e%2e%2e", "a%2fb", "1http:x"})
    CHECK(safeShardPath(ok));
  for (const char* bad :
       {"", "/abs.safetensors", "../x.safetensors", "a/../b", "./a", "a/.", "%2e%2e/x", "%2E./x",
        "a//b", "a/", "http://host/x", "C:x", "file:x", "a\\b", "a?b", "a#b", "x+y.z-1:w"})
    CHECK_FALSE(safeShardPath(bad));
  CHECK_FALSE(safeShardPath(std::string("a\0b", 3)));
}

TEST_CASE("the same result wherever the chunks split, valid or not") {
  checkSplits(kSmall, true);
  checkSplits("\xef\xbb\xbf{\"weight_map\":{\"\\ud83d\\ude00\xc3\xa9\":\"s\"},\"n\":-0.5e-3}",
              true);
  for (const char* bad :
       {"{\"weight_map\": {\"a\": \"s\", \"a\": \"t\"}}", "{\"weight_map\": 5}",
        "{\"weight_map\": {\"a\": \"../s\"}}", "{\"weight_map\": {\"a\": \"\\ud800\"}}",
        "{\"weight_map\": {\"a\": \"s\xe2\x82\"}}", "{\"x\": 01}", "{\"weight_map\": {}} x",
        "{\"weight_map\": {\"a\": 3}}"})
    checkSplits(bad, false);
}

TEST_CASE("a leading BOM is skipped, as TextDecoder does; a second one is no JSON") {
  CHECK(parse("\xef\xbb\xbf{\"weight_map\": {}}").ok);
  CHECK(parse("\xef\xbb\xbf{\"weight_map\": {}}", {1, 2}).ok);
  failing("\xef\xbb\xbf\xef\xbb\xbf{\"weight_map\": {}}");
  failing("\xef\xbb{\"weight_map\": {}}");
  failing(" \xef\xbb\xbf{\"weight_map\": {}}");
}

TEST_CASE("not an index: refused on the first chunk, saying what it looks like") {
  std::string shard = std::string("\x38\x00\x00\x00\x00\x00\x00\x00", 8) + "{\"__metadata__\":{}}";
  IndexParser p;
  CHECK_FALSE(p.feed(reinterpret_cast<const uint8_t*>(shard.data()), 16));
  CHECK(p.error().code == ErrorCode::InvalidIndex);
  CHECK(p.error().offset == 0);
  CHECK(p.error().message.find(".safetensors shard (an 8-byte header length, 56,") !=
        std::string::npos);
  CHECK_FALSE(p.finish());

  IndexParser few;  // the message waits for 9 bytes, however the input is split
  CHECK(few.feed(reinterpret_cast<const uint8_t*>(shard.data()), 1));
  CHECK_FALSE(few.feed(reinterpret_cast<const uint8_t*>(shard.data()) + 1, 8));
  CHECK(few.error().message == p.error().message);
  CHECK(failing(shard.substr(0, 5)).message.find("is it a .safetensors shard") !=
        std::string::npos);
  CHECK(failing(shard.substr(0, 5)).offset == 0);

  CHECK(failing("<!doctype html>").message.find("HTML") != std::string::npos);
  CHECK(failing("[{\"weight_map\": {}}]").message.find("an index is an object") !=
        std::string::npos);
  CHECK(failing("  \n\"weight_map\"").offset == 3);
  CHECK(failing("").message.find("empty") != std::string::npos);
  CHECK(failing(" \n ").message == "the index has 3 bytes and no JSON");
}

TEST_CASE("JSON syntax errors carry line, column and byte") {
  Parsed r = failing("{\"weight_map\": {}\n , ]");
  CHECK(r.offset == 21);
  CHECK(r.message ==
        "not valid JSON at line 2, column 4 (byte 21): expected a string key, found ']'");
  CHECK(failing("{\"weight_map\" {}}").message.find("expected ':' after the key, found '{'") !=
        std::string::npos);
  CHECK(failing("{\"a\": [1 2]}").offset == 9);
  CHECK(failing("{\"a\": [1,]}").offset == 9);
  CHECK(failing("{\"a\": {\"b\": 1,}}").offset == 14);
  CHECK(failing("{\"a\": }").offset == 6);
  CHECK(failing("{\"a\": tru}").offset == 9);
  CHECK(failing("{\"a\": nul}").offset == 9);
  CHECK(failing("{\"a\": True}").offset == 6);
  CHECK(failing("{\"a\": 01}").message.find("leading zero") != std::string::npos);
  CHECK(failing("{\"a\": -}").offset == 7);
  CHECK(failing("{\"a\": 1.}").offset == 8);
  CHECK(failing("{\"a\": 1e}").offset == 8);
  CHECK(failing("{\"a\": 1e+}").offset == 9);
  CHECK(failing("{\"a\": +1}").offset == 6);
  CHECK(failing("{\"a\": .5}").offset == 6);
  CHECK(failing("{'a': 1}").offset == 1);
  CHECK(failing("{\"weight_map\": {}}}").message.find("after the index's closing '}'") !=
        std::string::npos);
  CHECK(failing("{\"weight_map\": {}} {}").offset == 19);
}

TEST_CASE(
    "strings: escapes, control characters and UTF-8 as JSON.parse after a fatal TextDecoder") {
  CHECK(failing("{\"a\\x\": 1}").message.find("'x' after the '\\' at byte 3 is no JSON escape") !=
        std::string::npos);
  CHECK(failing("{\"a\": \"\\u12G4\"}").offset == 11);
  CHECK(failing("{\"a\": \"\\u12\"}").offset == 11);
  CHECK(failing("{\"a\": \"x\ny\"}").message.find("raw control character (byte 0x0A)") !=
        std::string::npos);
  CHECK(failing(std::string("{\"a\": \"\0\"}", 10)).offset == 7);
  CHECK(parse("{\"weight_map\": {}, \"a\": \"\x7f\"}").ok);  // DEL is no control character to JSON
  for (const char* bad : {"\xc0\x80", "\xc1\xbf", "\xe0\x80\x80", "\xed\xa0\x80",
                          "\xf0\x80\x80\x80", "\xf4\x90\x80\x80", "\xf5\x80\x80\x80", "\xff",
                          "\x80", "\xc3", "\xe6\x97", "\xc3\xc3\xa9"}) {
    INFO(bad);
    const Parsed r = failing(std::string("{\"weight_map\": {}, \"a\": \"") + bad + "\"}");
    CHECK(r.offset >= 25);
    CHECK(r.message.find("UTF-8") != std::string::npos);
  }
  for (const char* good : {"\xc2\x80", "\xdf\xbf", "\xe0\xa0\x80", "\xed\x9f\xbf", "\xee\x80\x80",
                           "\xf0\x90\x80\x80", "\xf4\x8f\xbf\xbf"})
    CHECK(parse(std::string("{\"weight_map\": {\"") + good + "\": \"s\"}}").names.at(0) == good);
  // Outside strings a non-ASCII byte is no JSON.
  CHECK(failing("{\"weight_map\": {}}\xc2\xa0").offset == 18);
}

TEST_CASE("a lone surrogate in a name or shard path is refused; elsewhere JSON.parse takes it") {
  Parsed r = failing("{\"weight_map\": {\"a\\ud800\": \"s\"}}");
  CHECK(r.message.find("lone surrogate \\ud800 in the tensor name at byte 16") !=
        std::string::npos);
  CHECK(failing("{\"weight_map\": {\"a\\udc00b\": \"s\"}}").message.find("\\udc00") !=
        std::string::npos);
  CHECK(failing("{\"weight_map\": {\"\\ud800\\u0041\": \"s\"}}").code == ErrorCode::InvalidIndex);
  CHECK(failing("{\"weight_map\": {\"\\ud800\\n\": \"s\"}}").code == ErrorCode::InvalidIndex);
  r = failing("{\"weight_map\": {\"a\": \"s\\ud83d\"}}");
  CHECK(r.tensor == "a");
  CHECK(r.message.find("shard path") != std::string::npos);
  CHECK(
      parse("{\"metadata\": {\"k\": \"\\udfff\\ud800\"}, \"weight_map\": {}, \"\\ud800\": 1}").ok);
}

TEST_CASE("truncated text: where it ends and what is still open") {
  const std::string full = kSmall;
  for (size_t n : {size_t(1), size_t(20), size_t(60), full.size() - 1}) {
    const Parsed r = failing(full.substr(0, n));
    CHECK(r.offset == n);
    CHECK(r.message.find("cut short") != std::string::npos);
  }
  CHECK(failing("{\"a\": \"xy").message.find("inside a string") != std::string::npos);
  CHECK(failing("{\"a\": 12").message.find("inside a number") != std::string::npos);
  CHECK(failing("{\"a\": [tr").message.find("inside a literal with 2 objects or arrays") !=
        std::string::npos);
}

TEST_CASE("nesting deeper than kMaxDepth is refused") {
  const uint32_t inner = IndexParser::kMaxDepth - 1;  // the top-level object is one level
  const std::string ok =
      "{\"weight_map\": {}, \"x\": " + std::string(inner, '[') + std::string(inner, ']') + "}";
  CHECK(parse(ok).ok);
  const std::string deep = "{\"x\": " + std::string(inner + 1, '[');
  const Parsed r = failing(deep);
  CHECK(r.offset == 6 + inner);
  CHECK(r.message.find("deeper than 4096") != std::string::npos);
}

TEST_CASE("weight_map and metadata: wrong types, missing, given twice") {
  Parsed r = failing("{\"weight_map\": [\"a\"]}");
  CHECK(r.offset == 15);
  CHECK(r.message.find("\"weight_map\" is not an object (it starts with '[')") !=
        std::string::npos);
  failing("{\"weight_map\": null}");
  failing("{\"weight_map\": \"a\"}");
  r = failing("{\"metadata\": {}, \"weight\": {}}");
  CHECK(r.message.find("no \"weight_map\" object") != std::string::npos);
  CHECK(r.offset == 30);
  for (const char* v : {"[]", "\"x\"", "5", "true", "false"}) {
    r = failing(std::string("{\"weight_map\": {}, \"metadata\": ") + v + "}");
    CHECK(r.message.find("\"metadata\" is not an object or null") != std::string::npos);
    CHECK(r.offset == 31);
  }
  r = failing("{\"weight_map\": {}, \"weight_map\": {}}");
  CHECK(r.message.find("appears twice") != std::string::npos);
  CHECK(r.offset == 19);
  failing("{\"metadata\": {}, \"weight_map\": {}, \"metadata\": null}");
}

TEST_CASE("a shard that is not a string names its tensor") {
  for (const char* v : {"3", "null", "{\"a\": 1}", "[\"s\"]", "true"}) {
    const Parsed r =
        failing(std::string("{\"weight_map\": {\"x\": \"s\", \"model.w\": ") + v + "}}");
    CHECK(r.tensor == "model.w");
    CHECK(r.offset == 26);
    CHECK(r.message.find("the shard of \"model.w\" is not a string") != std::string::npos);
  }
}

TEST_CASE("a name mapped twice: the name, both entries and shards, the second's offset") {
  const Parsed r = failing(
      "{\"weight_map\": {\"a\": \"s1\", \"b\": \"s1\", \"a\": \"s2\", \"b\": \"s2\", \"c\": "
      "\"s1\"}}");
  CHECK(r.tensor == "a");
  CHECK(r.offset == 38);
  CHECK(r.message ==
        "\"a\" is mapped twice in weight_map: entry 1 gives \"s1\", entry 3 (byte 38) \"s2\"; keep "
        "one of them (a bad merge or hand edit?)");
  // Escaped differently, still the same name.
  CHECK(failing("{\"weight_map\": {\"\\u0061\": \"s\", \"a\": \"s\"}}").tensor == "a");
}

TEST_CASE("unsafe shard paths: UnsafeShardPath, in the order JS gives verdicts") {
  Parsed r = failing("{\"weight_map\": {\"a\": \"ok.st\", \"b\": \"../up.st\"}}",
                     ErrorCode::UnsafeShardPath);
  CHECK(r.offset == 35);
  CHECK(r.message.find("shard path \"../up.st\" is not a relative path") != std::string::npos);
  failing("{\"weight_map\": {\"a\": \"\"}}", ErrorCode::UnsafeShardPath);
  failing("{\"weight_map\": {\"a\": \"https://x/y.st\"}}", ErrorCode::UnsafeShardPath);
  // JSON.parse fails first: any syntax error wins over a path.
  failing("{\"weight_map\": {\"a\": \"../x\"}, ]", ErrorCode::InvalidIndex);
  // Then metadata's type, wherever it is.
  failing("{\"weight_map\": {\"a\": \"../x\"}, \"metadata\": 1}", ErrorCode::InvalidIndex);
  // Then entries in order: an unsafe path before a non-string value or a repeat...
  r = failing("{\"weight_map\": {\"a\": \"../x\", \"b\": 1, \"b\": 2}}",
              ErrorCode::UnsafeShardPath);
  failing("{\"weight_map\": {\"a\": \"../x\", \"c\": \"s\", \"c\": \"s\"}}",
          ErrorCode::UnsafeShardPath);
  failing("{\"weight_map\": {\"a\": \"../x\", \"b\": 1}, \"z\": [}", ErrorCode::InvalidIndex);
  // ...and after one.
  CHECK(failing("{\"weight_map\": {\"b\": 1, \"a\": \"../x\"}}").tensor == "b");
  CHECK(failing("{\"weight_map\": {\"c\": \"s\", \"c\": \"s\", \"a\": \"../x\"}}").tensor == "c");
}

TEST_CASE("after an error nothing more is read") {
  IndexParser p;
  const std::string text = "{\"weight_map\": 1}";
  CHECK_FALSE(p.feed(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
  const Error first = p.error();
  CHECK_FALSE(p.feed(reinterpret_cast<const uint8_t*>("{}"), 2));
  CHECK_FALSE(p.finish());
  CHECK(p.error().offset == first.offset);
  CHECK(p.error().message == first.message);
  CHECK(p.errorText().find("\"code\":\"InvalidIndex\"") != std::string::npos);
}

namespace {

// An index as transformers writes one for a Kimi- or DeepSeek-sized MoE model: names in model
// order given to shards in runs, then listed sorted, two-space indent. Also the expected shard
// of each name.
std::string generateIndex(uint32_t count, uint32_t shards, bool padded,
                          std::map<std::string, std::string>& shardOfName) {
  static const char* const kAttention[] = {"q_a_proj", "q_b_proj", "kv_a_proj_with_mqa",
                                           "kv_b_proj", "o_proj"};
  static const char* const kProjections[] = {"gate_proj", "up_proj", "down_proj"};
  static const char* const kParts[] = {"weight",         "weight_scale_inv", "input_scale",
                                       "weight_scale_2", "weight_packed",    "weight_shape"};
  std::vector<std::string> names;
  for (uint32_t layer = 0; names.size() < count; ++layer) {
    const std::string p = "language_model.model.layers." + std::to_string(layer);
    names.push_back(p + ".input_layernorm.weight");
    names.push_back(p + ".post_attention_layernorm.weight");
    for (const char* a : kAttention) {
      names.push_back(p + ".self_attn." + a + ".weight");
      names.push_back(p + ".self_attn." + a + ".weight_scale_inv");
    }
    names.push_back(p + ".mlp.gate.weight");
    names.push_back(p + ".mlp.gate.e_score_correction_bias");
    for (int e = 0; e < 384; ++e)
      for (const char* proj : kProjections)
        for (const char* part : kParts)
          names.push_back(p + ".mlp.experts." + std::to_string(e) + "." + proj + "." + part);
  }
  names.resize(count);
  auto pad = [&](uint32_t v) {
    std::string s = std::to_string(v);
    return padded ? std::string(5 - s.size(), '0') + s : s;
  };
  std::vector<std::string> lines;
  for (uint32_t k = 0; k < count; ++k) {
    const std::string shard =
        "model-" + pad(uint64_t(k) * shards / count + 1) + "-of-" + pad(shards) + ".safetensors";
    shardOfName[names[k]] = shard;
    lines.push_back("    \"" + names[k] + "\": \"" + shard + "\"");
  }
  std::sort(lines.begin(), lines.end());
  std::string text =
      "{\n  \"metadata\": {\n    \"total_size\": 1234567890123\n  },\n  \"weight_map\": {\n";
  for (size_t i = 0; i < lines.size(); ++i)
    text += lines[i] + (i + 1 < lines.size() ? ",\n" : "\n");
  return text + "  }\n}\n";
}

void roundTrip(uint32_t count, uint32_t shards, bool padded, size_t chunk) {
  std::map<std::string, std::string> shardOfName;
  const std::string text = generateIndex(count, shards, padded, shardOfName);
  std::vector<size_t> cuts;
  for (size_t at = chunk; at < text.size(); at += chunk) cuts.push_back(at);
  const Parsed r = parse(text, cuts);
  REQUIRE(r.ok);
  REQUIRE(r.names.size() == count);
  REQUIRE(r.shards.size() == shards);
  CHECK(r.metadata == "{\n    \"total_size\": 1234567890123\n  }");
  // Grouped by shard in path order, sorted (weight_map order) within each.
  std::vector<std::string> paths;
  for (const auto& entry : shardOfName) paths.push_back(entry.second);
  std::sort(paths.begin(), paths.end());
  paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
  REQUIRE(r.shards == paths);
  for (uint32_t k = 0; k < count; ++k) {
    const std::string& shard = shardOfName.at(r.names[k]);
    REQUIRE(r.shards[r.shardOfNames[k]] == shard);
    if (k > 0 && r.shardOfNames[k - 1] == r.shardOfNames[k]) REQUIRE(r.names[k - 1] < r.names[k]);
    if (k > 0) REQUIRE(r.shardOfNames[k - 1] <= r.shardOfNames[k]);
  }
  for (uint32_t i = 0; i < shards; ++i) {
    const uint32_t end = i + 1 < shards ? r.firstNames[i + 1] : count;
    CHECK(end - r.firstNames[i] == r.nameCounts[i]);
  }
  const double perName = double(r.bytesInUse) / count;
  std::printf("index of %u names, %zu bytes: %llu bytes in use, %.2f per name\n", count,
              text.size(), static_cast<unsigned long long>(r.bytesInUse), perName);
  CHECK(perName < 20);
}

}  // namespace

TEST_CASE("a generated index of 50,000 names, unpadded shard names (model-1-of-61)") {
  roundTrip(50000, 61, false, 4093);
}

TEST_CASE("a generated index of 500,000 names over 96 shards", "[.][slow]") {
  roundTrip(500000, 96, true, 65536);
}

TEST_CASE("a name, shard path or key over its cap, or metadata over 1 MiB: refused as it arrives") {
  // At the cap: read; one byte over: refused at the string's quote, whatever the split.
  const std::string name(64 * 1024, 'n'), path(4096 - 12, 'p');
  const Parsed ok = parse("{\"weight_map\": {\"" + name + "\": \"" + path + ".safetensors\"}}");
  CHECK(ok.ok);
  for (const std::vector<size_t>& cuts :
       {std::vector<size_t>{}, std::vector<size_t>{20, 40000}, std::vector<size_t>{65000}}) {
    Parsed r = parse("{\"weight_map\": {\"" + name + "n\": \"s.safetensors\"}}", cuts);
    CHECK_FALSE(r.ok);
    CHECK(r.code == ErrorCode::InvalidIndex);
    CHECK(r.offset == 16);
    CHECK(r.message.find("the tensor name at byte 16 is over 65536 bytes") != std::string::npos);
    r = parse("{\"weight_map\": {\"x\": \"" + path + "p.safetensors\"}}", cuts);
    CHECK_FALSE(r.ok);
    CHECK(r.offset == 21);
    CHECK(r.message.find("the shard path at byte 21 is over 4096 bytes") != std::string::npos);
  }
  // Escapes count as what they decode to: 65,537 bytes of \u0041 is one over.
  std::string escaped;
  for (int k = 0; k <= 64 * 1024; ++k) escaped += "\\u0041";
  CHECK(failing("{\"weight_map\": {\"" + escaped + "\": \"s\"}}").offset == 16);
  CHECK(failing("{\"" + name + "k\": 1, \"weight_map\": {}}").message.find("the key at byte 1") !=
        std::string::npos);
  // A name in metadata is no tensor name: only the metadata's own cap applies to it.
  CHECK(parse("{\"weight_map\": {}, \"metadata\": {\"" + name + "x\": 1}}").ok);
  const std::string big(1024 * 1024, ' ');
  const Parsed r = failing("{\"weight_map\": {}, \"metadata\": {" + big + "}}");
  CHECK(r.offset == 31);
  CHECK(r.message.find("the metadata at byte 31 is over 1048576 bytes") != std::string::npos);
  CHECK(parse("{\"weight_map\": {}, \"metadata\": {" + big.substr(2) + "}}").ok);
}
