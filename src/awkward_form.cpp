// Step 1 of awkward.hpp: the form JSON -> AkForm. The rules are awkward's own (ak.forms
// from_dict and the content constructors), so a form this accepts is one ak.from_safetensors
// accepts, and the reader never meets a node shape it does not know.
#include <set>
#include <utility>

#include "awkward.hpp"
#include "json_tree.hpp"

namespace st {
namespace {

struct ClassName {
  const char* name;
  AkClass cls;
};

// Awkward 2 names, and the suffixed names of awkward 1 that ak.forms.from_dict still reads.
constexpr ClassName kClasses[] = {
    {"NumpyArray", AkClass::NumpyArray},
    {"EmptyArray", AkClass::EmptyArray},
    {"RegularArray", AkClass::RegularArray},
    {"ListOffsetArray", AkClass::ListOffsetArray},
    {"ListOffsetArray32", AkClass::ListOffsetArray},
    {"ListOffsetArrayU32", AkClass::ListOffsetArray},
    {"ListOffsetArray64", AkClass::ListOffsetArray},
    {"ListArray", AkClass::ListArray},
    {"ListArray32", AkClass::ListArray},
    {"ListArrayU32", AkClass::ListArray},
    {"ListArray64", AkClass::ListArray},
    {"RecordArray", AkClass::RecordArray},
    {"IndexedArray", AkClass::IndexedArray},
    {"IndexedArray32", AkClass::IndexedArray},
    {"IndexedArrayU32", AkClass::IndexedArray},
    {"IndexedArray64", AkClass::IndexedArray},
    {"IndexedOptionArray", AkClass::IndexedOptionArray},
    {"IndexedOptionArray32", AkClass::IndexedOptionArray},
    {"IndexedOptionArray64", AkClass::IndexedOptionArray},
    {"ByteMaskedArray", AkClass::ByteMaskedArray},
    {"BitMaskedArray", AkClass::BitMaskedArray},
    {"UnmaskedArray", AkClass::UnmaskedArray},
    {"UnionArray", AkClass::UnionArray},
    {"UnionArray8_32", AkClass::UnionArray},
    {"UnionArray8_U32", AkClass::UnionArray},
    {"UnionArray8_64", AkClass::UnionArray},
};

struct PrimitiveName {
  const char* name;
  Dtype dtype;
};

constexpr PrimitiveName kPrimitives[] = {
    {"bool", Dtype::BOOL},     {"int8", Dtype::I8},     {"uint8", Dtype::U8},
    {"int16", Dtype::I16},     {"uint16", Dtype::U16},  {"int32", Dtype::I32},
    {"uint32", Dtype::U32},    {"int64", Dtype::I64},   {"uint64", Dtype::U64},
    {"float16", Dtype::F16},   {"float32", Dtype::F32}, {"float64", Dtype::F64},
    {"complex64", Dtype::C64},
};

// Awkward primitives with no safetensors dtype: a file cannot hold them as awkward writes
// them, so they are refused as unsupported rather than as malformed.
bool isUnsupportedPrimitive(const std::string& p) {
  return p == "float128" || p == "complex128" || p == "complex256" ||
         p.rfind("datetime64", 0) == 0 || p.rfind("timedelta64", 0) == 0;
}

// Index dtypes, by awkward's names; `allowed` is a bit set over I8, U8, I32, U32, I64.
enum : unsigned { kI8 = 1, kU8 = 2, kI32 = 4, kU32 = 8, kI64 = 16 };

bool parseIndexType(std::string_view text, unsigned allowed, Dtype& out) {
  struct Row {
    const char* name;
    unsigned bit;
    Dtype dtype;
  };
  static constexpr Row rows[] = {{"i8", kI8, Dtype::I8},
                                 {"u8", kU8, Dtype::U8},
                                 {"i32", kI32, Dtype::I32},
                                 {"u32", kU32, Dtype::U32},
                                 {"i64", kI64, Dtype::I64}};
  for (const Row& r : rows) {
    if (text == r.name && (allowed & r.bit)) {
      out = r.dtype;
      return true;
    }
  }
  return false;
}

bool isOptionLike(AkClass c) {
  return c == AkClass::IndexedOptionArray || c == AkClass::ByteMaskedArray ||
         c == AkClass::BitMaskedArray || c == AkClass::UnmaskedArray;
}

class FormParser {
 public:
  FormParser(const JsonTree& json, AkForm& out) : json_(json), out_(out) {}

  Error error;

  // Appends the node at `j` and its contents (preorder); returns its index or kAkNone.
  uint32_t node(size_t j, const std::string& path) {
    const uint32_t self = static_cast<uint32_t>(out_.nodes.size());
    out_.nodes.emplace_back();
    if (is(j,
           JKind::String)) {  // "int64" is short for {"class": "NumpyArray", "primitive": "int64"}
      out_.nodes[self].cls = AkClass::NumpyArray;
      out_.nodes[self].parameters = "{}";
      return primitive(self, std::string(json_.text(j)), path) ? self : kAkNone;
    }
    if (!is(j, JKind::Object)) {
      fail(path, "is not an object (nor a primitive name like \"int64\")");
      return kAkNone;
    }
    if (!header(self, j, path)) return kAkNone;
    bool ok = false;
    switch (out_.nodes[self].cls) {
      case AkClass::NumpyArray: ok = numpy(self, j, path); break;
      case AkClass::EmptyArray: ok = true; break;
      case AkClass::RegularArray: ok = regular(self, j, path); break;
      case AkClass::ListOffsetArray:
        ok = buffer(self, j, path, "offsets", kI32 | kU32 | kI64) && content(self, j, path);
        break;
      case AkClass::ListArray:
        ok = buffer(self, j, path, "starts", kI32 | kU32 | kI64) &&
             buffer(self, j, path, "stops", kI32 | kU32 | kI64) && content(self, j, path);
        break;
      case AkClass::RecordArray: ok = record(self, j, path); break;
      case AkClass::IndexedArray:
        ok = buffer(self, j, path, "index", kI32 | kU32 | kI64) && content(self, j, path);
        break;
      case AkClass::IndexedOptionArray:
        ok = buffer(self, j, path, "index", kI32 | kI64) && content(self, j, path);
        break;
      case AkClass::ByteMaskedArray:
        ok = buffer(self, j, path, "mask", kI8) &&
             flag(j, path, "valid_when", out_.nodes[self].validWhen) && content(self, j, path);
        break;
      case AkClass::BitMaskedArray:
        ok = buffer(self, j, path, "mask", kU8) &&
             flag(j, path, "valid_when", out_.nodes[self].validWhen) &&
             flag(j, path, "lsb_order", out_.nodes[self].lsbOrder) && content(self, j, path);
        break;
      case AkClass::UnmaskedArray: ok = content(self, j, path); break;
      case AkClass::UnionArray:
        ok = buffer(self, j, path, "tags", kI8) &&
             buffer(self, j, path, "index", kI32 | kU32 | kI64) && unionContents(self, j, path);
        break;
    }
    return ok && canonical(self, path) ? self : kAkNone;
  }

 private:
  const JsonTree& json_;
  AkForm& out_;

  bool is(size_t j, JKind kind) const { return json_.is(j, kind); }
  size_t find(size_t object, const char* key) const { return json_.find(object, key); }

  // Records the first error; false, so that `return fail(...)` ends a check.
  bool fail(const std::string& path, const std::string& what,
            ErrorCode code = ErrorCode::AwkwardInvalidForm) {
    if (!error) error = makeError(code, 8, "awkward form: the node at " + path + " " + what);
    return false;
  }

  // class, parameters, form_key: what every node has.
  bool header(uint32_t self, size_t j, const std::string& path) {
    AkNode& n = out_.nodes[self];
    size_t cls = find(j, "class");
    if (!is(cls, JKind::String)) return fail(path, "has no \"class\" string");
    const std::string_view name = json_.text(cls);
    bool known = false;
    for (const ClassName& c : kClasses) {
      if (name == c.name) {
        n.cls = c.cls;
        known = true;
        break;
      }
    }
    if (!known) return fail(path, "has unknown class \"" + std::string(name) + "\"");
    size_t params = find(j, "parameters");
    n.parameters = "{}";
    if (params != kNoValue && !is(params, JKind::Null)) {
      if (!is(params, JKind::Object)) return fail(path, "has \"parameters\" that is not an object");
      n.parameters.clear();
      json_.write(params, n.parameters);
      size_t array = json_.find(params, "__array__");
      if (is(array, JKind::String)) n.array = std::string(json_.text(array));
    }
    size_t key = find(j, "form_key");
    if (key != kNoValue && !is(key, JKind::Null)) {
      if (!is(key, JKind::String)) return fail(path, "has a \"form_key\" that is not a string");
      n.formKey = std::string(json_.text(key));
    }
    return true;
  }

  bool primitive(uint32_t self, const std::string& p, const std::string& path) {
    for (const PrimitiveName& row : kPrimitives) {
      if (p == row.name) {
        out_.nodes[self].primitive = p;
        out_.nodes[self].dtype = row.dtype;
        return addBuffer(self, "data", row.dtype, path);
      }
    }
    if (isUnsupportedPrimitive(p))
      return fail(path, "has primitive \"" + p + "\", which no safetensors dtype holds",
                  ErrorCode::AwkwardUnsupportedType);
    return fail(path, "has unknown primitive \"" + p + "\"");
  }

  bool numpy(uint32_t self, size_t j, const std::string& path) {
    size_t p = find(j, "primitive");
    if (!is(p, JKind::String)) return fail(path, "has no \"primitive\" string");
    if (!primitive(self, std::string(json_.text(p)), path)) return false;
    size_t inner = find(j, "inner_shape");
    if (inner == kNoValue || is(inner, JKind::Null)) return true;
    if (!is(inner, JKind::Array)) return fail(path, "has an \"inner_shape\" that is not an array");
    AkNode& n = out_.nodes[self];
    for (size_t d : json_.items(inner)) {
      if (!is(d, JKind::Unsigned))
        return fail(path, "has an inner_shape entry that is not a non-negative integer");
      uint64_t v = json_.nodes[d].v.u;
      n.innerShape.push_back(v);
      if (v != 0 && n.innerSize > UINT64_MAX / v)
        return fail(path, "has an inner_shape whose product overflows 64 bits");
      n.innerSize *= v;
    }
    return true;
  }

  bool regular(uint32_t self, size_t j, const std::string& path) {
    size_t size = find(j, "size");
    if (!is(size, JKind::Unsigned))
      return fail(path, "has no \"size\" that is a non-negative integer");
    out_.nodes[self].size = json_.nodes[size].v.u;
    return content(self, j, path);
  }

  bool flag(size_t j, const std::string& path, const char* name, bool& out) {
    size_t v = find(j, name);
    if (!is(v, JKind::Boolean)) return fail(path, std::string("has no boolean \"") + name + "\"");
    out = json_.nodes[v].flag;
    return true;
  }

  // An index buffer named in the form by `attribute`: "offsets": "i64" and so on.
  bool buffer(uint32_t self, size_t j, const std::string& path, const char* attribute,
              unsigned allowed) {
    size_t v = find(j, attribute);
    Dtype dtype;
    if (!is(v, JKind::String) || !parseIndexType(json_.text(v), allowed, dtype))
      return fail(
          path, std::string("has no valid \"") + attribute + "\" (" + allowedNames(allowed) + ")");
    return addBuffer(self, attribute, dtype, path);
  }

  static std::string allowedNames(unsigned allowed) {
    std::string out;
    const char* names[] = {"i8", "u8", "i32", "u32", "i64"};
    for (unsigned i = 0; i < 5; ++i) {
      if (!(allowed & (1u << i))) continue;
      if (!out.empty()) out += ", ";
      out += '"';
      out += names[i];
      out += '"';
    }
    return "one of " + out;
  }

  bool addBuffer(uint32_t self, const char* attribute, Dtype dtype, const std::string& path) {
    AkNode& n = out_.nodes[self];
    if (n.formKey.empty()) return fail(path, "has no form_key, so its buffers have no names");
    AkBuffer b;
    b.name = n.formKey + "-" + attribute;
    b.node = self;
    b.attribute = attribute;
    b.dtype = dtype;
    n.buffers[n.buffers[0] == kAkNone ? 0 : 1] = static_cast<uint32_t>(out_.buffers.size());
    out_.buffers.push_back(std::move(b));
    return true;
  }

  bool content(uint32_t self, size_t j, const std::string& path) {
    size_t c = find(j, "content");
    if (c == kNoValue) return fail(path, "has no \"content\"");
    uint32_t child = node(c, path + ".content");
    if (child == kAkNone) return false;
    out_.nodes[self].contents.push_back(child);
    return true;
  }

  bool record(uint32_t self, size_t j, const std::string& path) {
    size_t contents = find(j, "contents");
    if (contents == kNoValue) return fail(path, "has no \"contents\"");
    size_t fields = find(j, "fields");
    std::vector<std::string> names;
    bool tuple = true;
    if (fields != kNoValue && !is(fields, JKind::Null)) {
      if (!is(fields, JKind::Array))
        return fail(path, "has \"fields\" that is neither an array nor null");
      for (size_t f : json_.items(fields)) {
        if (!is(f, JKind::String)) return fail(path, "has a field name that is not a string");
        names.emplace_back(json_.text(f));
      }
      tuple = false;
    }
    std::vector<size_t> children;
    if (is(contents, JKind::Object) && fields == kNoValue) {  // awkward 1: {"x": form, "y": form}
      for (const auto& m : json_.members(contents)) {
        names.emplace_back(m.first);
        children.push_back(m.second);
      }
      tuple = false;
    } else if (is(contents, JKind::Array)) {
      children = json_.items(contents);
    } else {
      return fail(path, "has \"contents\" that is not an array");
    }
    if (!tuple && names.size() != children.size())
      return fail(path, "has " + decimal(names.size()) + " fields but " + decimal(children.size()) +
                            " contents");
    std::set<std::string> seen;
    for (const std::string& name : names)
      if (!seen.insert(name).second) return fail(path, "has the field \"" + name + "\" twice");
    out_.nodes[self].isTuple = tuple;
    out_.nodes[self].fields = std::move(names);
    for (size_t i = 0; i < children.size(); ++i) {
      std::string where = tuple ? path + ".contents[" + decimal(i) + "]"
                                : path + ".\"" + out_.nodes[self].fields[i] + "\"";
      uint32_t child = node(children[i], where);
      if (child == kAkNone) return false;
      out_.nodes[self].contents.push_back(child);
    }
    return true;
  }

  bool unionContents(uint32_t self, size_t j, const std::string& path) {
    size_t contents = find(j, "contents");
    if (!is(contents, JKind::Array)) return fail(path, "has no \"contents\" array");
    // Tags are int8: at most 128 contents; awkward wants at least 2.
    const std::vector<size_t> children = json_.items(contents);
    if (children.size() < 2 || children.size() > 128)
      return fail(path, "has " + decimal(children.size()) + " contents (a union has 2 to 128)");
    for (size_t i = 0; i < children.size(); ++i) {
      uint32_t child = node(children[i], path + ".contents[" + decimal(i) + "]");
      if (child == kAkNone) return false;
      out_.nodes[self].contents.push_back(child);
    }
    return true;
  }

  // Awkward's constructors refuse these, so ak.from_safetensors would too; refusing them here
  // also keeps the reader's cases few.
  bool canonical(uint32_t self, const std::string& path) {
    const AkNode& n = out_.nodes[self];
    const bool categorical = n.array == "categorical";
    if (isOptionLike(n.cls) || n.cls == AkClass::IndexedArray) {
      const AkNode& c = out_.nodes[n.contents[0]];
      if (isOptionLike(c.cls) || c.cls == AkClass::IndexedArray ||
          (c.cls == AkClass::UnionArray && !categorical))
        return fail(path, std::string("is a ") + akClassName(n.cls) + " whose content is a " +
                              akClassName(c.cls) +
                              " (awkward forbids option, indexed or union content here)");
    }
    if (n.cls == AkClass::UnionArray) {
      for (uint32_t c : n.contents)
        if (out_.nodes[c].cls == AkClass::UnionArray)
          return fail(path, "is a UnionArray with a UnionArray among its contents");
    }
    if (n.array == "string" || n.array == "bytestring") {
      if (n.cls != AkClass::ListOffsetArray && n.cls != AkClass::ListArray &&
          n.cls != AkClass::RegularArray)
        return fail(path, "has __array__ \"" + n.array + "\" but is not a list type");
      const AkNode& c = out_.nodes[n.contents[0]];
      const char* inner = n.array == "string" ? "char" : "byte";
      if (c.cls != AkClass::NumpyArray || c.primitive != "uint8" || !c.innerShape.empty() ||
          c.array != inner)
        return fail(path, "has __array__ \"" + n.array +
                              "\" but its content is not a uint8 NumpyArray with __array__ \"" +
                              inner + "\"");
    }
    if ((n.array == "char" || n.array == "byte") &&
        (n.cls != AkClass::NumpyArray || n.primitive != "uint8"))
      return fail(path, "has __array__ \"" + n.array + "\" but is not a uint8 NumpyArray");
    return true;
  }
};

bool parseLength(std::string_view text, uint64_t& out) {
  if (text.empty() || text.size() > 20) return false;
  uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    if (v > (UINT64_MAX - 9) / 10) return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  out = v;
  return true;
}

}  // namespace

const char* akClassName(AkClass cls) {
  switch (cls) {
    case AkClass::NumpyArray: return "NumpyArray";
    case AkClass::EmptyArray: return "EmptyArray";
    case AkClass::RegularArray: return "RegularArray";
    case AkClass::ListOffsetArray: return "ListOffsetArray";
    case AkClass::ListArray: return "ListArray";
    case AkClass::RecordArray: return "RecordArray";
    case AkClass::IndexedArray: return "IndexedArray";
    case AkClass::IndexedOptionArray: return "IndexedOptionArray";
    case AkClass::ByteMaskedArray: return "ByteMaskedArray";
    case AkClass::BitMaskedArray: return "BitMaskedArray";
    case AkClass::UnmaskedArray: return "UnmaskedArray";
    case AkClass::UnionArray: return "UnionArray";
  }
  return "?";
}

Error parseAkForm(std::string_view form, std::string_view length, AkForm& out) {
  out = AkForm{};
  if (!parseLength(length, out.length))
    return makeError(
        ErrorCode::AwkwardInvalidMetadata, 8,
        "awkward metadata: length \"" + std::string(length) + "\" is not a decimal integer");
  if (out.length > kAkMaxLength)
    return makeError(ErrorCode::AwkwardInvalidMetadata, 8,
                     "awkward metadata: length " + std::string(length) + " is over 2^53 - 1");
  JsonTree json;
  switch (JsonTree::parse(form, kAkMaxJsonDepth, json)) {
    case JsonTree::Status::Invalid:
      return makeError(ErrorCode::AwkwardInvalidForm, 8, "awkward form: not valid JSON");
    case JsonTree::Status::TooDeep:
      return makeError(ErrorCode::AwkwardInvalidForm, 8,
                       "awkward form: JSON nested deeper than " + decimal(kAkMaxJsonDepth));
    case JsonTree::Status::Ok: break;
  }
  FormParser parser(json, out);
  if (parser.node(0, "root") == kAkNone) {
    Error e = parser.error;
    out = AkForm{};
    return e;
  }
  return {};
}

}  // namespace st
