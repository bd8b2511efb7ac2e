// Awkward arrays stored by awkward-array's `ak.to_safetensors`: every buffer of the array's
// layout is one tensor named "{form_key}-{attribute}", and `__metadata__` holds "form" (the
// awkward form as JSON) and "length" (a decimal string).
//
// The contract, in three steps, none of which reads tensor data on its own:
// 1. parseAkForm: the form and length from the metadata -> an AkForm, its nodes in preorder
//    (node 0 is the root), and the buffers the form names, each with the dtype the form requires.
// 2. The caller binds each buffer to the file's tensor of that name (found, dtype, element
//    count, byte offset); checkAkBuffers then checks presence and dtypes, derives how many
//    entries each node's buffers can serve (its capacity), and checks the array's length
//    against the root's capacity.
// 3. Lazily, whenever the caller has read part of an offsets/starts/stops/index/tags buffer,
//    the checkAk* functions validate those elements against the capacities of the contents they
//    point into. Values that pass are safe to use as positions: no read past a buffer follows.
//
// Safe on untrusted input: errors are values (codes Awkward*, see error.hpp), the tensor field
// names the buffer concerned and the message names the node (form key and class).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "dtype.hpp"
#include "error.hpp"

namespace st {

enum class AkClass : uint8_t {
  NumpyArray,
  EmptyArray,
  RegularArray,
  ListOffsetArray,
  ListArray,
  RecordArray,
  IndexedArray,
  IndexedOptionArray,
  ByteMaskedArray,
  BitMaskedArray,
  UnmaskedArray,
  UnionArray,
};

const char* akClassName(AkClass cls);

// A node's capacity when no buffer limits it (a RegularArray of size 0, a RecordArray
// without fields, a NumpyArray whose inner shape holds a 0).
constexpr uint64_t kAkUnbounded = UINT64_MAX;
constexpr uint32_t kAkNone = UINT32_MAX;
// JSON nesting the form may use; deeper forms are refused before they become a tree.
constexpr int kAkMaxJsonDepth = 128;
// The array length must be exact as a JS Number.
constexpr uint64_t kAkMaxLength = (uint64_t{1} << 53) - 1;

struct AkBuffer {
  std::string name;         // form_key + "-" + attribute: the tensor's name
  uint32_t node = 0;        // the node it belongs to
  std::string attribute;    // data, offsets, starts, stops, index, mask or tags
  Dtype dtype = Dtype::U8;  // what the form requires
  // Set by the caller before checkAkBuffers: the tensor of that name, if any.
  bool found = false;
  Dtype fileDtype = Dtype::U8;
  uint64_t elements = 0;    // its element count (the product of its shape)
  uint64_t byteOffset = 0;  // absolute file offset of its first byte
};

struct AkNode {
  AkClass cls = AkClass::EmptyArray;
  std::string formKey;  // empty when the form gives none
  // The node's parameters as compact JSON, "{}" when absent: as nlohmann's dump() writes them
  // (each key once), except that a non-integer number keeps its source text.
  std::string parameters;
  std::string array;                 // parameters["__array__"] when it is a string
  std::string primitive;             // NumpyArray: awkward's name ("int64", "float32", ...)
  Dtype dtype = Dtype::U8;           // NumpyArray: the safetensors dtype of the data buffer
  std::vector<uint64_t> innerShape;  // NumpyArray
  uint64_t innerSize = 1;            // NumpyArray: product of innerShape (elements per entry)
  uint64_t size = 0;                 // RegularArray
  bool validWhen = false;            // ByteMaskedArray, BitMaskedArray
  bool lsbOrder = false;             // BitMaskedArray
  std::vector<uint32_t>
      contents;  // child nodes: one for lists/options/indexed, n for records/unions
  std::vector<std::string> fields;  // RecordArray with named fields (empty for a tuple)
  bool isTuple = false;
  uint32_t buffers[2] = {kAkNone, kAkNone};  // into AkForm::buffers, in attribute order
  // Set by checkAkBuffers: entries this node's buffers can serve, and the buffer that limits it
  // (kAkNone when none does).
  uint64_t capacity = 0;
  uint32_t limitedBy = kAkNone;
};

struct AkForm {
  std::vector<AkNode> nodes;      // preorder: every node comes before its contents
  std::vector<AkBuffer> buffers;  // in node order
  uint64_t length = 0;
  bool checked = false;  // checkAkBuffers succeeded
};

// Step 1. `form` and `length` are the metadata values. Errors: AwkwardInvalidMetadata (length),
// AwkwardInvalidForm, AwkwardUnsupportedType (a primitive safetensors cannot hold).
Error parseAkForm(std::string_view form, std::string_view length, AkForm& out);

// Step 2. Errors: AwkwardMissingBuffer, AwkwardDtypeMismatch, AwkwardBufferTooShort.
Error checkAkBuffers(AkForm& form);

// Step 3. Each validates `count` elements of one of `node`'s buffers, read into memory at the
// given pointers (little-endian, of the buffer's dtype), which are elements [first, first +
// count) of the buffer. Errors: AwkwardDecreasingOffsets, AwkwardOutOfBounds.
// ListOffsetArray offsets: non-decreasing, within [0, content capacity].
Error checkAkOffsets(const AkForm& form, uint32_t node, const void* offsets, uint64_t first,
                     uint64_t count);
// ListArray: starts[i] <= stops[i]; a non-empty list lies within [0, content capacity].
Error checkAkLists(const AkForm& form, uint32_t node, const void* starts, const void* stops,
                   uint64_t first, uint64_t count);
// IndexedArray: 0 <= index < content capacity. IndexedOptionArray: index < content capacity
// (a negative index is a missing value).
Error checkAkIndex(const AkForm& form, uint32_t node, const void* index, uint64_t first,
                   uint64_t count);
// UnionArray: 0 <= tags[i] < number of contents, 0 <= index[i] < capacity of that content.
Error checkAkUnion(const AkForm& form, uint32_t node, const void* tags, const void* index,
                   uint64_t first, uint64_t count);

// The parsed form for JS and tools: {"length": n, "nodes": [{"class", "form_key",
// "parameters", "contents": [node indices], "buffers": {attribute: name}, "capacity", plus
// the class's own fields ("primitive", "dtype", "inner_shape", "size", "fields", "offsets",
// "index", "valid_when", ...)}]}. Capacity is null when unbounded or not yet checked.
std::string akFormTreeJson(const AkForm& form);

}  // namespace st
