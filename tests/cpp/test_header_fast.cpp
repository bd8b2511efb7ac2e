// The header's fast path (header.cpp's scanner for the common shape of header) against the SAX
// path it falls back to: random valid headers, each parsed as written (the scanner takes it)
// and with one unknown field added to one entry (the scanner gives up on unknown fields, so the
// SAX path parses it); the two tables must be identical, arenas and orders included. Both paths
// also parse the same header when an escape sends it to the SAX path.
#include <catch.hpp>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "header.hpp"
#include "support.hpp"

using namespace st;

namespace {

struct Generated {
  std::string plain;   // the fast path's input
  std::string detour;  // the same table, but with an unknown field: the SAX path's
  uint64_t dataBytes = 0;
};

Generated generate(std::mt19937& rng) {
  auto pick = [&rng](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  auto space = [&]() -> std::string {
    static const char* const kSpaces[] = {"", "", "", " ", "\n", "\t", "\r\n  "};
    return kSpaces[pick(7)];
  };
  static const char* const kPieces[] = {"model", ".", "layers", "0", "weight",  "_",  "é", "日本",
                                        "😁",     "/", "A",      "z", "experts", "17", "~", " "};
  auto name = [&]() {
    std::string s;
    for (int i = pick(6); i > 0; --i) s += kPieces[pick(16)];
    return s;
  };
  std::vector<std::string> entries;
  uint64_t offset = 0;
  const int count = pick(12);
  for (int i = 0; i < count; ++i) {
    std::string n = name() + "#" + std::to_string(i);  // distinct names
    const Dtype d = static_cast<Dtype>(pick(kDtypeCount));
    const unsigned bits = dtypeBits(d);
    std::vector<uint64_t> shape;
    uint64_t elements = 1;
    if (bits % 8 != 0) {
      shape.push_back(4 * static_cast<uint64_t>(pick(5)));  // F4 and F6: whole bytes
      elements = shape[0];
    } else {
      for (int r = pick(4); r > 0; --r) {
        shape.push_back(static_cast<uint64_t>(pick(6)));
        elements *= shape.back();
      }
    }
    const uint64_t bytes = elements * bits / 8;
    std::string dims;
    for (size_t k = 0; k < shape.size(); ++k)
      dims += (k ? "," + space() : "") + std::to_string(shape[k]);
    const std::vector<std::string> fields = {
        "\"dtype\"" + space() + ":" + space() + "\"" + dtypeName(d) + "\"",
        "\"shape\"" + space() + ":" + space() + "[" + space() + dims + space() + "]",
        "\"data_offsets\"" + space() + ":" + space() + "[" + std::to_string(offset) + "," +
            space() + std::to_string(offset + bytes) + "]"};
    std::vector<int> order = {0, 1, 2};
    std::shuffle(order.begin(), order.end(), rng);
    std::string body;
    for (int k : order) body += (body.empty() ? "" : "," + space()) + fields[k];
    entries.push_back("\"" + n + "\"" + space() + ":" + space() + "{" + space() + body + space() +
                      "}");
    offset += bytes;
  }
  const int metadata = pick(4);  // none, null, {}, some keys
  std::string meta;
  if (metadata == 1) meta = "\"__metadata__\":" + space() + "null";
  if (metadata == 2) meta = "\"__metadata__\":{" + space() + "}";
  if (metadata == 3) {
    meta = "\"__metadata__\":{";
    for (int k = pick(4); k >= 0; --k)
      meta += "\"" + name() + "#" + std::to_string(k) + "\":" + space() + "\"" + name() + "\"" +
              (k ? "," : "");
    meta += "}";
  }
  if (!meta.empty())
    entries.insert(entries.begin() + pick(static_cast<int>(entries.size()) + 1), meta);
  auto join = [&](const std::vector<std::string>& parts) {
    std::string s = space() + "{" + space();
    for (size_t k = 0; k < parts.size(); ++k) s += (k ? "," + space() : "") + parts[k];
    return s + space() + "}" + space();
  };
  Generated g;
  g.plain = join(entries);
  // The same header with an unknown field (holding nested values) in one tensor entry.
  std::vector<std::string> detour = entries;
  for (std::string& e : detour) {
    if (e.rfind("\"__metadata__\"", 0) == 0) continue;
    e.insert(e.size() - 1, ",\"zz\":[1,{\"a\":null},\"x\"]");
    break;
  }
  // No tensor to add a field to: an escaped name sends the header to the SAX path instead.
  if (detour == entries)
    detour.push_back(R"("a\u0062":{"dtype":"U8","shape":[0],"data_offsets":[0,0]})");
  g.detour = join(detour);
  g.dataBytes = offset;
  return g;
}

void requireSameTable(const Header& a, const Header& b) {
  REQUIRE(a.strings == b.strings);
  REQUIRE(a.dims == b.dims);
  REQUIRE(a.tensors.size() == b.tensors.size());
  for (size_t i = 0; i < a.tensors.size(); ++i) {
    const TensorInfo& x = a.tensors[i];
    const TensorInfo& y = b.tensors[i];
    REQUIRE(x.begin == y.begin);
    REQUIRE(x.end == y.end);
    REQUIRE(x.name.offset == y.name.offset);
    REQUIRE(x.name.length == y.name.length);
    REQUIRE(x.dimsOffset == y.dimsOffset);
    REQUIRE(x.rank == y.rank);
    REQUIRE(x.dtype == y.dtype);
  }
  REQUIRE(a.byName == b.byName);
  REQUIRE(a.hasMetadata == b.hasMetadata);
  REQUIRE(a.metadata.size() == b.metadata.size());
  for (size_t i = 0; i < a.metadata.size(); ++i) {
    REQUIRE(a.str(a.metadata[i].key) == b.str(b.metadata[i].key));
    REQUIRE(a.str(a.metadata[i].value) == b.str(b.metadata[i].value));
  }
}

}  // namespace

TEST_CASE("the fast path and the SAX path build identical tables", "[header][property]") {
  std::mt19937 rng(20240611);
  for (int round = 0; round < 3000; ++round) {
    const Generated g = generate(rng);
    INFO(g.plain);
    Header fast, sax;
    const std::vector<uint8_t> plain = st_test::makeFile(g.plain, g.dataBytes);
    const Error e = parseFile(plain.data(), plain.size(), plain.size(), fast);
    REQUIRE(std::string(e.message) == "");
    const std::vector<uint8_t> detour = st_test::makeFile(g.detour, g.dataBytes);
    INFO(g.detour);
    const Error e2 = parseFile(detour.data(), detour.size(), detour.size(), sax);
    REQUIRE(std::string(e2.message) == "");
    if (g.detour.find("\\u0062") != std::string::npos) continue;  // a different table by design
    requireSameTable(fast, sax);
  }
}

TEST_CASE("a header the fast path gives up on mid-way parses from a clean table", "[header]") {
  // The scanner has appended "a", "b" and a shape before it meets the escape in "c\u0064".
  const std::string text =
      R"({"__metadata__":{"k":"v"},"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},)"
      R"("b":{"dtype":"U8","shape":[1],"data_offsets":[2,3]},"c\u0064":{"dtype":"U8","shape":[],"data_offsets":[3,4]}})";
  const std::vector<uint8_t> file = st_test::makeFile(text, 4);
  Header h;
  REQUIRE(!parseFile(file.data(), file.size(), file.size(), h));
  REQUIRE(h.strings == "kvabcd");
  REQUIRE(h.dims == std::vector<uint64_t>{2, 1});
  REQUIRE(h.tensors.size() == 3);
  REQUIRE(h.metadata.size() == 1);
  REQUIRE(h.name(h.tensors[2]) == "cd");
}
