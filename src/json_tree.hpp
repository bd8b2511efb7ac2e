// A JSON document as a flat tree, for the awkward form (awkward_form.cpp). Parsed by nlohmann's
// SAX parser through the same sax_parse call and input iterator as the header (json_text.hpp),
// so the module holds nlohmann's lexer once; a DOM (basic_json) would bring a second copy and
// its serializer.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace st {

constexpr size_t kNoValue = SIZE_MAX;  // a lookup that found nothing

enum class JKind : uint8_t { Null, Boolean, Unsigned, Integer, Float, String, Array, Object };

// One JSON value. 16 bytes in wasm32, the size of a basic_json.
struct JNode {
  struct Span {
    size_t at, size;
  };
  union Value {
    uint64_t u;  // Unsigned
    int64_t i;   // Integer
    Span text;   // String (decoded) and Float (its source text): bytes in JsonTree::pool
  };
  JKind kind = JKind::Null;
  bool flag = false;  // Boolean: its value
  size_t end = 0;     // one past the last node of its subtree
  Value v{};
};

// The nodes in preorder: a container's members follow it up to its `end`, an object's as key
// (a String node), value, key, value... in source order. A value is a node index; the root is
// node 0. Lookups see what nlohmann's ordered_json would hold: a repeated key once, at its
// first position, with its last value.
class JsonTree {
 public:
  enum class Status : uint8_t { Ok, Invalid, TooDeep };

  // Parses `text` into `out`. Containers nested deeper than maxDepth are not stored (the parse
  // goes on, so that text which is not JSON is still Invalid rather than TooDeep): nesting
  // costs a hostile document neither memory nor recursion depth.
  static Status parse(std::string_view text, size_t maxDepth, JsonTree& out);

  std::vector<JNode> nodes;
  std::string pool;

  bool is(size_t i, JKind k) const { return i != kNoValue && nodes[i].kind == k; }
  std::string_view text(size_t i) const {
    return std::string_view(pool.data() + nodes[i].v.text.at, nodes[i].v.text.size);
  }
  // An array's elements, in order.
  std::vector<size_t> items(size_t array) const;
  // The value of `key` in an object (its last, if the key repeats), kNoValue if it has none.
  size_t find(size_t object, std::string_view key) const;
  // An object's (key, value) pairs in source order, each key once: at its first position,
  // with its last value.
  std::vector<std::pair<std::string_view, size_t>> members(size_t object) const;
  // Appends compact JSON, as nlohmann's dump() writes the same value, except that a non-integer
  // number is written as its source text (1E2, not 100.0: JSON.parse reads the same double).
  void write(size_t i, std::string& out) const;
};

}  // namespace st
