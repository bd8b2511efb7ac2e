#include "json_tree.hpp"

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "error.hpp"
#include "json_text.hpp"

namespace st {
namespace {

// nlohmann's SAX protocol, building a JsonTree.
class TreeBuilder {
 public:
  TreeBuilder(JsonTree& tree, size_t maxDepth) : tree_(tree), maxDepth_(maxDepth) {}
  bool invalid = false;  // not JSON
  bool tooDeep = false;

  bool null() {
    add(JKind::Null);
    return true;
  }
  bool boolean(bool value) {
    if (JNode* n = add(JKind::Boolean)) n->flag = value;
    return true;
  }
  bool number_integer(int64_t value) {
    if (JNode* n = add(JKind::Integer)) n->v.i = value;
    return true;
  }
  bool number_unsigned(uint64_t value) {
    if (JNode* n = add(JKind::Unsigned)) n->v.u = value;
    return true;
  }
  bool number_float(double, const std::string& source) {  // finite: nlohmann refuses others
    if (JNode* n = addText(JKind::Float, source)) {
      // The lexer writes the C locale's decimal point into the text; JSON's is '.'.
      for (size_t k = n->v.text.at; k < tree_.pool.size(); ++k) {
        char c = tree_.pool[k];
        if (!((c >= '0' && c <= '9') || c == '-' || c == '+' || c == 'e' || c == 'E'))
          tree_.pool[k] = '.';
      }
    }
    return true;
  }
  bool string(std::string& value) {
    addText(JKind::String, value);
    return true;
  }
  bool key(std::string& value) {
    addText(JKind::String, value);
    return true;
  }
  bool binary(nlohmann::json::binary_t&) {  // not in JSON text
    add(JKind::Null);
    return true;
  }
  bool start_object(std::size_t) { return open(JKind::Object); }
  bool start_array(std::size_t) { return open(JKind::Array); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) {
    invalid = true;
    return false;
  }

 private:
  JsonTree& tree_;
  const size_t maxDepth_;
  std::vector<size_t> open_;  // the containers being read
  size_t skip_ = 0;           // containers open from the first one too deep on

  JNode* add(JKind kind) {
    if (skip_) return nullptr;
    tree_.nodes.emplace_back();
    JNode& n = tree_.nodes.back();
    n.kind = kind;
    n.end = tree_.nodes.size();
    return &n;
  }
  JNode* addText(JKind kind, const std::string& bytes) {
    JNode* n = add(kind);
    if (n) {
      n->v.text = JNode::Span{tree_.pool.size(), bytes.size()};
      tree_.pool += bytes;
    }
    return n;
  }
  // The container that would be the (maxDepth + 1)th open one is too deep: maxDepth containers
  // may nest, as a depth callback on nlohmann's DOM parser counts them.
  bool open(JKind kind) {
    if (skip_ || open_.size() >= maxDepth_) {
      tooDeep = true;
      ++skip_;
      return true;
    }
    add(kind);
    open_.push_back(tree_.nodes.size() - 1);
    return true;
  }
  bool close() {
    if (skip_) {
      --skip_;
      return true;
    }
    tree_.nodes[open_.back()].end = tree_.nodes.size();
    open_.pop_back();
    return true;
  }
};

}  // namespace

JsonTree::Status JsonTree::parse(std::string_view text, size_t maxDepth, JsonTree& out) {
  out = JsonTree{};
  TreeBuilder builder(out, maxDepth);
  const char* begin = text.data();
  const char* head = begin;
  nlohmann::json::sax_parse(TrackedIterator{begin, &head},
                            TrackedIterator{begin + text.size(), &head}, &builder,
                            nlohmann::json::input_format_t::json, true, false);
  if (builder.invalid) return Status::Invalid;
  return builder.tooDeep ? Status::TooDeep : Status::Ok;
}

// A container's members follow it, each up to its own `end`; an object's are its keys and
// values, alternating.
std::vector<size_t> JsonTree::items(size_t array) const {
  std::vector<size_t> out;
  for (size_t i = array + 1; i != nodes[array].end; i = nodes[i].end) out.push_back(i);
  return out;
}

size_t JsonTree::find(size_t object, std::string_view key) const {
  size_t found = kNoValue;
  for (size_t k = object + 1; k != nodes[object].end; k = nodes[k + 1].end)
    if (text(k) == key) found = k + 1;
  return found;
}

std::vector<std::pair<std::string_view, size_t>> JsonTree::members(size_t object) const {
  std::vector<std::pair<std::string_view, size_t>> out;
  std::map<std::string_view, size_t> slot;
  for (size_t k = object + 1; k != nodes[object].end; k = nodes[k + 1].end) {
    auto placed = slot.emplace(text(k), out.size());
    if (placed.second)
      out.emplace_back(text(k), k + 1);
    else
      out[placed.first->second].second = k + 1;
  }
  return out;
}

void JsonTree::write(size_t i, std::string& out) const {
  const JNode& n = nodes[i];
  switch (n.kind) {
    case JKind::Null: out += "null"; break;
    case JKind::Boolean: out += n.flag ? "true" : "false"; break;
    case JKind::Unsigned: out += decimal(n.v.u); break;
    case JKind::Integer: out += decimal(n.v.i); break;
    case JKind::Float: out += text(i); break;
    case JKind::String: appendJsonString(out, text(i)); break;
    case JKind::Array: {
      out += '[';
      for (size_t c = i + 1; c != n.end; c = nodes[c].end) {
        if (c != i + 1) out += ',';
        write(c, out);  // recursion depth: at most the parse's maxDepth
      }
      out += ']';
      break;
    }
    case JKind::Object: {
      out += '{';
      bool comma = false;
      for (const auto& m : members(i)) {
        if (comma) out += ',';
        comma = true;
        appendJsonString(out, m.first);
        out += ':';
        write(m.second, out);
      }
      out += '}';
      break;
    }
  }
}

}  // namespace st
