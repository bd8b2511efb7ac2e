// Steps 2 and 3 of awkward.hpp: buffers against the form, then buffer values against the
// contents they point into. The capacity of a node (entries its buffers can serve) is what
// makes step 3 local: an offset is safe when it is within its content's capacity, whatever
// else the file holds, so each range the reader fetches is checked on its own.
#include <cstring>
#include <utility>

#include "awkward.hpp"
#include "json_text.hpp"

namespace st {
namespace {

std::string label(const AkNode& n) {
  return (n.formKey.empty() ? std::string("(no form_key)") : n.formKey) + " (" +
         akClassName(n.cls) + ")";
}

// Sets n's capacity to `cap` if that is lower than what it has, remembering the buffer
// responsible.
void limit(AkNode& n, uint64_t cap, uint32_t buffer) {
  if (cap < n.capacity) {
    n.capacity = cap;
    n.limitedBy = buffer;
  }
}

// One element of an index buffer as a signed 64-bit value. Index dtypes are I8, U8, I32, U32
// and I64; U32 and U8 never exceed int64. Copying bytes keeps unaligned pointers defined.
int64_t element(Dtype dtype, const void* base, uint64_t i) {
  const unsigned char* p = static_cast<const unsigned char*>(base);
  switch (dtype) {
    case Dtype::I8: return static_cast<int8_t>(p[i]);
    case Dtype::U8: return p[i];
    case Dtype::I32: {
      int32_t v;
      std::memcpy(&v, p + 4 * i, 4);
      return v;
    }
    case Dtype::U32: {
      uint32_t v;
      std::memcpy(&v, p + 4 * i, 4);
      return v;
    }
    default: {
      int64_t v;
      std::memcpy(&v, p + 8 * i, 8);
      return v;
    }
  }
}

// Where element `i` of buffer b sits in the file.
uint64_t elementOffset(const AkBuffer& b, uint64_t i) {
  return b.byteOffset + i * (dtypeBits(b.dtype) / 8);
}

// Common preconditions of the step-3 checks: a checked form, a node of the right class, and
// elements that exist in the buffer.
Error checkRead(const AkForm& form, uint32_t node, AkClass cls, uint64_t first, uint64_t count) {
  if (!form.checked || node >= form.nodes.size() || form.nodes[node].cls != cls)
    return makeError(
        ErrorCode::AwkwardInvalidForm, 0,
        std::string("awkward: node ") + decimal(node) + " is not a checked " + akClassName(cls));
  for (uint32_t b : form.nodes[node].buffers) {
    if (b == kAkNone) continue;
    const AkBuffer& buf = form.buffers[b];
    if (first > buf.elements || count > buf.elements - first)
      return makeError(ErrorCode::AwkwardOutOfBounds, buf.byteOffset,
                       "awkward: elements " + decimal(first) + ".." + decimal(first + count) +
                           " of " + buf.name + " were asked for; it has " + decimal(buf.elements),
                       buf.name);
  }
  return {};
}

Error outOfBounds(const AkForm& form, const AkBuffer& b, uint64_t i, int64_t value,
                  const std::string& bound) {
  return makeError(ErrorCode::AwkwardOutOfBounds, elementOffset(b, i),
                   "awkward " + label(form.nodes[b.node]) + ": " + b.name + "[" + decimal(i) +
                       "] = " + decimal(value) + " is outside " + bound,
                   b.name);
}

std::string contentBound(const AkForm& form, uint32_t content) {
  const AkNode& c = form.nodes[content];
  return "[0, " + decimal(c.capacity) + "], the entries " + label(c) + " holds";
}

}  // namespace

Error checkAkBuffers(AkForm& form) {
  form.checked = false;
  for (AkBuffer& b : form.buffers) {
    if (!b.found)
      return makeError(
          ErrorCode::AwkwardMissingBuffer, 8,
          "awkward " + label(form.nodes[b.node]) + ": the file has no tensor \"" + b.name + "\"",
          b.name);
    if (b.fileDtype != b.dtype)
      return makeError(ErrorCode::AwkwardDtypeMismatch, b.byteOffset,
                       "awkward " + label(form.nodes[b.node]) + ": " + b.name + " is " +
                           dtypeName(b.fileDtype) + ", the form says " + dtypeName(b.dtype),
                       b.name);
  }
  // Contents come after their node in preorder: walking backwards sees every content first.
  for (size_t k = form.nodes.size(); k-- > 0;) {
    AkNode& n = form.nodes[k];
    n.capacity = kAkUnbounded;
    n.limitedBy = kAkNone;
    const AkBuffer* b0 = n.buffers[0] == kAkNone ? nullptr : &form.buffers[n.buffers[0]];
    const AkBuffer* b1 = n.buffers[1] == kAkNone ? nullptr : &form.buffers[n.buffers[1]];
    auto fromContent = [&](uint32_t c, uint64_t per) {
      const AkNode& child = form.nodes[c];
      if (child.capacity == kAkUnbounded) return;
      uint64_t cap = per == 0 ? kAkUnbounded : child.capacity / per;
      if (cap < n.capacity) {
        n.capacity = cap;
        n.limitedBy = child.limitedBy;
      }
    };
    switch (n.cls) {
      case AkClass::NumpyArray:
        if (n.innerSize != 0) limit(n, b0->elements / n.innerSize, n.buffers[0]);
        break;
      case AkClass::EmptyArray: n.capacity = 0; break;
      case AkClass::RegularArray: fromContent(n.contents[0], n.size); break;
      case AkClass::ListOffsetArray:
        // Even an empty list array has offsets[0]: awkward reads length + 1 offsets.
        if (b0->elements == 0)
          return makeError(ErrorCode::AwkwardBufferTooShort, b0->byteOffset,
                           "awkward " + label(n) + ": " + b0->name +
                               " is empty; offsets have at least one element",
                           b0->name);
        limit(n, b0->elements - 1, n.buffers[0]);
        break;
      case AkClass::ListArray:
      case AkClass::UnionArray:
        limit(n, b0->elements, n.buffers[0]);
        limit(n, b1->elements, n.buffers[1]);
        break;
      case AkClass::IndexedArray:
      case AkClass::IndexedOptionArray: limit(n, b0->elements, n.buffers[0]); break;
      case AkClass::ByteMaskedArray:
        limit(n, b0->elements, n.buffers[0]);
        fromContent(n.contents[0], 1);
        break;
      case AkClass::BitMaskedArray:
        // Eight entries per mask byte; saturate rather than wrap on an absurd element count.
        limit(n, b0->elements > UINT64_MAX / 8 ? UINT64_MAX - 1 : b0->elements * 8, n.buffers[0]);
        fromContent(n.contents[0], 1);
        break;
      case AkClass::UnmaskedArray: fromContent(n.contents[0], 1); break;
      case AkClass::RecordArray:
        for (uint32_t c : n.contents) fromContent(c, 1);
        break;
    }
  }
  const AkNode& root = form.nodes[0];
  if (form.length > root.capacity) {
    if (root.limitedBy == kAkNone)  // only an EmptyArray limits without a buffer
      return makeError(ErrorCode::AwkwardBufferTooShort, 8,
                       "awkward: the array's length is " + decimal(form.length) +
                           " but an EmptyArray in its form can hold no entries");
    const AkBuffer& b = form.buffers[root.limitedBy];
    return makeError(ErrorCode::AwkwardBufferTooShort, b.byteOffset,
                     "awkward: the array's length is " + decimal(form.length) + " but " + b.name +
                         " has " + decimal(b.elements) + " elements, enough for " +
                         decimal(form.nodes[b.node].capacity) + " entries of " +
                         label(form.nodes[b.node]),
                     b.name);
  }
  form.checked = true;
  return {};
}

Error checkAkOffsets(const AkForm& form, uint32_t node, const void* offsets, uint64_t first,
                     uint64_t count) {
  if (Error e = checkRead(form, node, AkClass::ListOffsetArray, first, count)) return e;
  const AkNode& n = form.nodes[node];
  const AkBuffer& b = form.buffers[n.buffers[0]];
  const uint64_t cap = form.nodes[n.contents[0]].capacity;
  int64_t previous = 0;
  for (uint64_t i = 0; i < count; ++i) {
    int64_t v = element(b.dtype, offsets, i);
    if (v < 0 || static_cast<uint64_t>(v) > cap)
      return outOfBounds(form, b, first + i, v, contentBound(form, n.contents[0]));
    if (i > 0 && v < previous)
      return makeError(ErrorCode::AwkwardDecreasingOffsets, elementOffset(b, first + i),
                       "awkward " + label(n) + ": " + b.name + "[" + decimal(first + i) + "] = " +
                           decimal(v) + " is less than the offset before it, " + decimal(previous),
                       b.name);
    previous = v;
  }
  return {};
}

Error checkAkLists(const AkForm& form, uint32_t node, const void* starts, const void* stops,
                   uint64_t first, uint64_t count) {
  if (Error e = checkRead(form, node, AkClass::ListArray, first, count)) return e;
  const AkNode& n = form.nodes[node];
  const AkBuffer& bStarts = form.buffers[n.buffers[0]];
  const AkBuffer& bStops = form.buffers[n.buffers[1]];
  const uint64_t cap = form.nodes[n.contents[0]].capacity;
  for (uint64_t i = 0; i < count; ++i) {
    int64_t start = element(bStarts.dtype, starts, i);
    int64_t stop = element(bStops.dtype, stops, i);
    if (stop < start)
      return makeError(ErrorCode::AwkwardDecreasingOffsets, elementOffset(bStops, first + i),
                       "awkward " + label(n) + ": " + bStops.name + "[" + decimal(first + i) +
                           "] = " + decimal(stop) + " is less than " + bStarts.name + "[" +
                           decimal(first + i) + "] = " + decimal(start),
                       bStops.name);
    if (start == stop) continue;  // an empty list points nowhere: awkward ignores its positions
    if (start < 0)
      return outOfBounds(form, bStarts, first + i, start, contentBound(form, n.contents[0]));
    if (static_cast<uint64_t>(stop) > cap)
      return outOfBounds(form, bStops, first + i, stop, contentBound(form, n.contents[0]));
  }
  return {};
}

Error checkAkIndex(const AkForm& form, uint32_t node, const void* index, uint64_t first,
                   uint64_t count) {
  const bool option =
      node < form.nodes.size() && form.nodes[node].cls == AkClass::IndexedOptionArray;
  if (Error e = checkRead(form, node, option ? AkClass::IndexedOptionArray : AkClass::IndexedArray,
                          first, count))
    return e;
  const AkNode& n = form.nodes[node];
  const AkBuffer& b = form.buffers[n.buffers[0]];
  const uint64_t cap = form.nodes[n.contents[0]].capacity;
  for (uint64_t i = 0; i < count; ++i) {
    int64_t v = element(b.dtype, index, i);
    if (v < 0 && option) continue;  // a missing value
    if (v < 0 || static_cast<uint64_t>(v) >= cap) {
      const AkNode& c = form.nodes[n.contents[0]];
      return outOfBounds(form, b, first + i, v,
                         "[0, " + decimal(cap) + "), the entries " + label(c) + " holds");
    }
  }
  return {};
}

Error checkAkUnion(const AkForm& form, uint32_t node, const void* tags, const void* index,
                   uint64_t first, uint64_t count) {
  if (Error e = checkRead(form, node, AkClass::UnionArray, first, count)) return e;
  const AkNode& n = form.nodes[node];
  const AkBuffer& bTags = form.buffers[n.buffers[0]];
  const AkBuffer& bIndex = form.buffers[n.buffers[1]];
  const int64_t contents = static_cast<int64_t>(n.contents.size());
  for (uint64_t i = 0; i < count; ++i) {
    int64_t tag = element(bTags.dtype, tags, i);
    if (tag < 0 || tag >= contents)
      return outOfBounds(form, bTags, first + i, tag,
                         "[0, " + decimal(contents) + "), the union's contents");
    const AkNode& c = form.nodes[n.contents[static_cast<size_t>(tag)]];
    int64_t v = element(bIndex.dtype, index, i);
    if (v < 0 || static_cast<uint64_t>(v) >= c.capacity)
      return outOfBounds(form, bIndex, first + i, v,
                         "[0, " + decimal(c.capacity) + "), the entries of content " +
                             decimal(tag) + ", " + label(c));
  }
  return {};
}

std::string akFormTreeJson(const AkForm& form) {
  // Written by hand, key by key in the order (and with the escaping) that nlohmann's
  // ordered_json wrote before: compact, UTF-8 as it is.
  static const char* const kIndexNames[] = {"i8", "u8", "i32", "u32", "i64"};
  auto indexName = [](Dtype d) {
    switch (d) {
      case Dtype::I8: return kIndexNames[0];
      case Dtype::U8: return kIndexNames[1];
      case Dtype::I32: return kIndexNames[2];
      case Dtype::U32: return kIndexNames[3];
      default: return kIndexNames[4];
    }
  };
  auto key = [](std::string& out, const char* name) {
    out += ",\"";
    out += name;
    out += "\":";
  };
  auto boolean = [](bool v) { return v ? "true" : "false"; };
  auto numbers = [](std::string& out, const auto& values) {
    out += '[';
    for (size_t i = 0; i < values.size(); ++i) out += (i ? "," : "") + decimal(values[i]);
    out += ']';
  };
  std::string out = "{\"length\":" + decimal(form.length) + ",\"nodes\":[";
  for (const AkNode& n : form.nodes) {
    if (&n != &form.nodes.front()) out += ',';
    out += "{\"class\":";
    appendJsonString(out, akClassName(n.cls));
    key(out, "form_key");
    if (n.formKey.empty())
      out += "null";
    else
      appendJsonString(out, n.formKey);
    key(out, "parameters");
    out += n.parameters.empty() ? "{}" : n.parameters;  // compact JSON already (parseAkForm)
    if (n.cls == AkClass::NumpyArray) {
      key(out, "primitive");
      appendJsonString(out, n.primitive);
      key(out, "dtype");
      appendJsonString(out, dtypeName(n.dtype));
      key(out, "inner_shape");
      numbers(out, n.innerShape);
    }
    if (n.cls == AkClass::RegularArray) {
      key(out, "size");
      out += decimal(n.size);
    }
    if (n.cls == AkClass::RecordArray) {
      key(out, "fields");
      if (n.isTuple) {
        out += "null";
      } else {
        out += '[';
        for (size_t i = 0; i < n.fields.size(); ++i) {
          if (i) out += ',';
          appendJsonString(out, n.fields[i]);
        }
        out += ']';
      }
    }
    if (n.cls == AkClass::ByteMaskedArray || n.cls == AkClass::BitMaskedArray) {
      key(out, "valid_when");
      out += boolean(n.validWhen);
    }
    if (n.cls == AkClass::BitMaskedArray) {
      key(out, "lsb_order");
      out += boolean(n.lsbOrder);
    }
    std::string buffers;
    for (uint32_t b : n.buffers) {
      if (b == kAkNone) continue;
      const AkBuffer& buf = form.buffers[b];
      if (buf.attribute != "data") {
        key(out, buf.attribute.c_str());
        appendJsonString(out, indexName(buf.dtype));
      }
      buffers += buffers.empty() ? '{' : ',';
      appendJsonString(buffers, buf.attribute);
      buffers += ':';
      appendJsonString(buffers, buf.name);
    }
    key(out, "buffers");
    out += buffers.empty() ? "{}" : buffers + '}';
    key(out, "contents");
    numbers(out, n.contents);
    key(out, "capacity");
    out += form.checked && n.capacity != kAkUnbounded ? decimal(n.capacity) : std::string("null");
    out += '}';
  }
  out += "]}";
  return out;
}

}  // namespace st
