// Step 1 of awkward.hpp: the form JSON -> AkForm. The rules are awkward's own (ak.forms
// from_dict and the content constructors), so a form this accepts is one ak.from_safetensors
// accepts, and the reader never meets a node shape it does not know.
#include <set>
#include <utility>

#include <nlohmann/json.hpp>

#include "awkward.hpp"

namespace st {
namespace {

// ordered_json keeps the field order of old-style record contents ({"x": ..., "y": ...}).
using Json = nlohmann::ordered_json;

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
    {"bool", Dtype::BOOL},     {"int8", Dtype::I8},       {"uint8", Dtype::U8},
    {"int16", Dtype::I16},     {"uint16", Dtype::U16},    {"int32", Dtype::I32},
    {"uint32", Dtype::U32},    {"int64", Dtype::I64},     {"uint64", Dtype::U64},
    {"float16", Dtype::F16},   {"float32", Dtype::F32},   {"float64", Dtype::F64},
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

bool parseIndexType(const std::string& text, unsigned allowed, Dtype& out) {
  struct Row { const char* name; unsigned bit; Dtype dtype; };
  static constexpr Row rows[] = {{"i8", kI8, Dtype::I8}, {"u8", kU8, Dtype::U8},
                                 {"i32", kI32, Dtype::I32}, {"u32", kU32, Dtype::U32},
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
  explicit FormParser(AkForm& out) : out_(out) {}

  Error error;

  // Appends the node at `j` and its contents (preorder); returns its index or kAkNone.
  uint32_t node(const Json& j, const std::string& path) {
    const uint32_t self = static_cast<uint32_t>(out_.nodes.size());
    out_.nodes.emplace_back();
    if (j.is_string()) {  // "int64" is short for {"class": "NumpyArray", "primitive": "int64"}
      out_.nodes[self].cls = AkClass::NumpyArray;
      out_.nodes[self].parameters = "{}";
      return primitive(self, j.get_ref<const std::string&>(), path) ? self : kAkNone;
    }
    if (!j.is_object()) {
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
        ok = buffer(self, j, path, "tags", kI8) && buffer(self, j, path, "index", kI32 | kU32 | kI64) &&
             unionContents(self, j, path);
        break;
    }
    return ok && canonical(self, path) ? self : kAkNone;
  }

 private:
  AkForm& out_;

  // Records the first error; false, so that `return fail(...)` ends a check.
  bool fail(const std::string& path, const std::string& what,
            ErrorCode code = ErrorCode::AwkwardInvalidForm) {
    if (!error) error = makeError(code, 8, "awkward form: the node at " + path + " " + what);
    return false;
  }

  // class, parameters, form_key: what every node has.
  bool header(uint32_t self, const Json& j, const std::string& path) {
    AkNode& n = out_.nodes[self];
    auto cls = j.find("class");
    if (cls == j.end() || !cls->is_string()) return fail(path, "has no \"class\" string");
    const std::string& name = cls->get_ref<const std::string&>();
    bool known = false;
    for (const ClassName& c : kClasses) {
      if (name == c.name) {
        n.cls = c.cls;
        known = true;
        break;
      }
    }
    if (!known) return fail(path, "has unknown class \"" + name + "\"");
    auto params = j.find("parameters");
    n.parameters = "{}";
    if (params != j.end() && !params->is_null()) {
      if (!params->is_object()) return fail(path, "has \"parameters\" that is not an object");
      n.parameters = params->dump(-1, ' ', false, Json::error_handler_t::replace);
      auto array = params->find("__array__");
      if (array != params->end() && array->is_string()) n.array = array->get<std::string>();
    }
    auto key = j.find("form_key");
    if (key != j.end() && !key->is_null()) {
      if (!key->is_string()) return fail(path, "has a \"form_key\" that is not a string");
      n.formKey = key->get<std::string>();
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

  bool numpy(uint32_t self, const Json& j, const std::string& path) {
    auto p = j.find("primitive");
    if (p == j.end() || !p->is_string()) return fail(path, "has no \"primitive\" string");
    if (!primitive(self, p->get_ref<const std::string&>(), path)) return false;
    auto inner = j.find("inner_shape");
    if (inner == j.end() || inner->is_null()) return true;
    if (!inner->is_array()) return fail(path, "has an \"inner_shape\" that is not an array");
    AkNode& n = out_.nodes[self];
    for (const Json& d : *inner) {
      if (!d.is_number_unsigned()) return fail(path, "has an inner_shape entry that is not a non-negative integer");
      uint64_t v = d.get<uint64_t>();
      n.innerShape.push_back(v);
      if (v != 0 && n.innerSize > UINT64_MAX / v) return fail(path, "has an inner_shape whose product overflows 64 bits");
      n.innerSize *= v;
    }
    return true;
  }

  bool regular(uint32_t self, const Json& j, const std::string& path) {
    auto size = j.find("size");
    if (size == j.end() || !size->is_number_unsigned())
      return fail(path, "has no \"size\" that is a non-negative integer");
    out_.nodes[self].size = size->get<uint64_t>();
    return content(self, j, path);
  }

  bool flag(const Json& j, const std::string& path, const char* name, bool& out) {
    auto v = j.find(name);
    if (v == j.end() || !v->is_boolean()) return fail(path, std::string("has no boolean \"") + name + "\"");
    out = v->get<bool>();
    return true;
  }

  // An index buffer named in the form by `attribute`: "offsets": "i64" and so on.
  bool buffer(uint32_t self, const Json& j, const std::string& path, const char* attribute,
              unsigned allowed) {
    auto v = j.find(attribute);
    Dtype dtype;
    if (v == j.end() || !v->is_string() || !parseIndexType(v->get_ref<const std::string&>(), allowed, dtype))
      return fail(path, std::string("has no valid \"") + attribute + "\" (" + allowedNames(allowed) + ")");
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

  bool content(uint32_t self, const Json& j, const std::string& path) {
    auto c = j.find("content");
    if (c == j.end()) return fail(path, "has no \"content\"");
    uint32_t child = node(*c, path + ".content");
    if (child == kAkNone) return false;
    out_.nodes[self].contents.push_back(child);
    return true;
  }

  bool record(uint32_t self, const Json& j, const std::string& path) {
    auto contents = j.find("contents");
    if (contents == j.end()) return fail(path, "has no \"contents\"");
    auto fields = j.find("fields");
    std::vector<std::string> names;
    bool tuple = true;
    if (fields != j.end() && !fields->is_null()) {
      if (!fields->is_array()) return fail(path, "has \"fields\" that is neither an array nor null");
      for (const Json& f : *fields) {
        if (!f.is_string()) return fail(path, "has a field name that is not a string");
        names.push_back(f.get<std::string>());
      }
      tuple = false;
    }
    std::vector<const Json*> children;
    if (contents->is_object() && (fields == j.end())) {  // awkward 1: {"x": form, "y": form}
      for (auto it = contents->begin(); it != contents->end(); ++it) {
        names.push_back(it.key());
        children.push_back(&it.value());
      }
      tuple = false;
    } else if (contents->is_array()) {
      for (const Json& c : *contents) children.push_back(&c);
    } else {
      return fail(path, "has \"contents\" that is not an array");
    }
    if (!tuple && names.size() != children.size())
      return fail(path, "has " + std::to_string(names.size()) + " fields but " +
                            std::to_string(children.size()) + " contents");
    std::set<std::string> seen;
    for (const std::string& name : names)
      if (!seen.insert(name).second) return fail(path, "has the field \"" + name + "\" twice");
    out_.nodes[self].isTuple = tuple;
    out_.nodes[self].fields = std::move(names);
    for (size_t i = 0; i < children.size(); ++i) {
      std::string where = tuple ? path + ".contents[" + std::to_string(i) + "]"
                                : path + ".\"" + out_.nodes[self].fields[i] + "\"";
      uint32_t child = node(*children[i], where);
      if (child == kAkNone) return false;
      out_.nodes[self].contents.push_back(child);
    }
    return true;
  }

  bool unionContents(uint32_t self, const Json& j, const std::string& path) {
    auto contents = j.find("contents");
    if (contents == j.end() || !contents->is_array()) return fail(path, "has no \"contents\" array");
    // Tags are int8: at most 128 contents; awkward wants at least 2.
    if (contents->size() < 2 || contents->size() > 128)
      return fail(path, "has " + std::to_string(contents->size()) + " contents (a union has 2 to 128)");
    for (size_t i = 0; i < contents->size(); ++i) {
      uint32_t child = node((*contents)[i], path + ".contents[" + std::to_string(i) + "]");
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
                              akClassName(c.cls) + " (awkward forbids option, indexed or union content here)");
    }
    if (n.cls == AkClass::UnionArray) {
      for (uint32_t c : n.contents)
        if (out_.nodes[c].cls == AkClass::UnionArray)
          return fail(path, "is a UnionArray with a UnionArray among its contents");
    }
    if (n.array == "string" || n.array == "bytestring") {
      if (n.cls != AkClass::ListOffsetArray && n.cls != AkClass::ListArray && n.cls != AkClass::RegularArray)
        return fail(path, "has __array__ \"" + n.array + "\" but is not a list type");
      const AkNode& c = out_.nodes[n.contents[0]];
      const char* inner = n.array == "string" ? "char" : "byte";
      if (c.cls != AkClass::NumpyArray || c.primitive != "uint8" || !c.innerShape.empty() || c.array != inner)
        return fail(path, "has __array__ \"" + n.array + "\" but its content is not a uint8 NumpyArray with __array__ \"" + inner + "\"");
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
    return makeError(ErrorCode::AwkwardInvalidMetadata, 8,
                     "awkward metadata: length \"" + std::string(length) + "\" is not a decimal integer");
  if (out.length > kAkMaxLength)
    return makeError(ErrorCode::AwkwardInvalidMetadata, 8,
                     "awkward metadata: length " + std::string(length) + " is over 2^53 - 1");
  // Deeper containers are dropped from the tree as they are parsed (the callback says no), so
  // a hostile form costs neither memory nor recursion depth; the flag turns that into an error.
  bool tooDeep = false;
  Json::parser_callback_t depthLimit = [&tooDeep](int depth, Json::parse_event_t event, Json&) {
    if ((event == Json::parse_event_t::object_start || event == Json::parse_event_t::array_start) &&
        depth >= kAkMaxJsonDepth) {
      tooDeep = true;
      return false;
    }
    return true;
  };
  Json j = Json::parse(form.begin(), form.end(), depthLimit, /*allow_exceptions=*/false);
  if (j.is_discarded())
    return makeError(ErrorCode::AwkwardInvalidForm, 8, "awkward form: not valid JSON");
  if (tooDeep)
    return makeError(ErrorCode::AwkwardInvalidForm, 8,
                     "awkward form: JSON nested deeper than " + std::to_string(kAkMaxJsonDepth));
  FormParser parser(out);
  if (parser.node(j, "root") == kAkNone) {
    Error e = parser.error;
    out = AkForm{};
    return e;
  }
  return {};
}

}  // namespace st
