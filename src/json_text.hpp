// JSON text in and out, shared by the core's two JSON readers (the header's SAX handler and the
// awkward form's): the input iterator they both hand to nlohmann, and the string escaping of the
// JSON the awkward code writes.
#pragma once
#include <cstddef>
#include <iterator>
#include <string>
#include <string_view>

namespace st {

// nlohmann's SAX callbacks carry no position. This iterator publishes the lexer's read head
// so that a semantic error (an unknown dtype, say) can report where in the input it sits.
// Every reader passes exactly this type with nlohmann::json to nlohmann::json::sax_parse, so
// nlohmann's lexer is instantiated once in the whole module (it is not small).
struct TrackedIterator {
  using iterator_category = std::forward_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;

  const char* p;
  const char** head;

  reference operator*() const { return *p; }
  TrackedIterator& operator++() {
    *head = ++p;
    return *this;
  }
  TrackedIterator operator++(int) {
    TrackedIterator old = *this;
    ++*this;
    return old;
  }
  bool operator==(const TrackedIterator& o) const { return p == o.p; }
  bool operator!=(const TrackedIterator& o) const { return p != o.p; }
};

// Appends s as a JSON string with serde_json's escaping, which the reference writes through
// (and nlohmann's dump() without ensure_ascii matches): `"` and `\`, the short forms \b \f \n
// \r \t, other bytes below 0x20 as \u00xx with lowercase hex, everything else raw ('/', DEL
// and multi-byte UTF-8 included; s is expected to be valid UTF-8).
void appendJsonString(std::string& out, std::string_view s);

}  // namespace st
