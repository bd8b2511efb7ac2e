#include "writer.hpp"

#include <algorithm>

#include "header.hpp"
#include "json_text.hpp"
#include "name_order.hpp"

namespace st {
namespace {

constexpr std::string_view kMetadataKey = "__metadata__";

bool checkedMul(uint64_t a, uint64_t b, uint64_t& out) {
  if (a != 0 && b > UINT64_MAX / a) return false;
  out = a * b;
  return true;
}

std::string quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }

std::string hexByte(uint8_t c) {
  const char* digits = "0123456789ABCDEF";
  return {'0', 'x', digits[c >> 4], digits[c & 15]};
}

// Rule 4: the reader rejects the whole header when any byte of it is not UTF-8.
const uint8_t* bytesOf(std::string_view s) { return reinterpret_cast<const uint8_t*>(s.data()); }

bool isUtf8(std::string_view s) { return findInvalidUtf8(bytesOf(s), s.size()) == s.size(); }

Error notUtf8(std::string_view s, const std::string& what, std::string tensor = {}) {
  size_t bad = findInvalidUtf8(bytesOf(s), s.size());
  return makeError(ErrorCode::InvalidHeader, 0,
                   what + " is not valid UTF-8: bad byte " + hexByte(bytesOf(s)[bad]) +
                       " at byte " + decimal(bad),
                   std::move(tensor));
}

// Rules 7-9 for one tensor, with the reader's arithmetic: a shape whose running product
// overflows is rejected even when a later dimension is 0.
Error checkByteLength(const WriterTensor& t, uint64_t offset) {
  auto fail = [&t, offset](ErrorCode code, const std::string& why) {
    return makeError(code, offset, "tensor " + quoted(t.name) + " " + why, std::string(t.name));
  };
  uint64_t elements = 1;
  for (uint32_t i = 0; i < t.rank; ++i)
    if (!checkedMul(elements, t.shape[i], elements))
      return fail(ErrorCode::ValidationOverflow,
                  "shape " + shapeText(t.shape, t.rank) + ": element count overflows 64 bits");
  uint64_t bits = 0;
  auto count = [&] { return decimal(elements) + " elements of " + dtypeName(t.dtype); };
  if (!checkedMul(elements, dtypeBits(t.dtype), bits))
    return fail(ErrorCode::ValidationOverflow, count() + ": bit count overflows 64 bits");
  if (bits % 8 != 0)
    return fail(ErrorCode::MisalignedSlice,
                count() + " are " + decimal(bits) + " bits, not a whole number of bytes");
  if (t.byteLength != bits / 8)
    return fail(ErrorCode::TensorInvalidInfo,
                std::string(dtypeName(t.dtype)) + " " + shapeText(t.shape, t.rank) + " needs " +
                    decimal(bits / 8) + " bytes but its data is " + decimal(t.byteLength));
  return {};
}

Error tooLarge(uint64_t length, const char* qualifier) {
  return makeError(ErrorCode::HeaderTooLarge, 0,
                   std::string("header would be ") + qualifier + decimal(length) +
                       " bytes, over the limit of " + decimal(kMaxHeaderLength));
}

// Rule 5 as this project reads it: names and keys must be unique, "__metadata__" is no
// tensor name, and the dtype must be one the reader knows. Sorts byName and byKey.
Error checkKeys(const WriterTensor* tensors, std::vector<uint32_t>& byName,
                const WriterMetadata* metadata, std::vector<uint32_t>& byKey) {
  for (uint32_t i = 0; i < byName.size(); ++i) {
    const WriterTensor& t = tensors[i];
    if (static_cast<unsigned>(t.dtype) >= kDtypeCount)
      return makeError(ErrorCode::InvalidHeaderDeserialization, 0,
                       "tensor " + quoted(t.name) + " has unknown dtype code " +
                           decimal(static_cast<unsigned>(t.dtype)),
                       std::string(t.name));
    if (t.name == kMetadataKey)
      return makeError(ErrorCode::InvalidHeaderDeserialization, 0,
                       "a tensor cannot be named \"__metadata__\": that key holds the metadata",
                       std::string(t.name));
  }
  const NameOf tensorName = [](const void* all, uint32_t i) {
    return static_cast<const WriterTensor*>(all)[i].name;
  };
  const NameOf metadataKey = [](const void* entries, uint32_t i) {
    return (*static_cast<const WriterMetadata*>(entries))[i].first;
  };
  std::string_view repeated;
  byName = orderByName(byName.size(), tensorName, tensors);
  if (findRepeat(byName, tensorName, tensors, repeated))
    return makeError(ErrorCode::InvalidHeaderDeserialization, 0,
                     "duplicate tensor name " + quoted(repeated), std::string(repeated));
  if (!metadata) return {};
  byKey = orderByName(byKey.size(), metadataKey, metadata);
  if (findRepeat(byKey, metadataKey, metadata, repeated))
    return makeError(ErrorCode::InvalidHeaderDeserialization, 0,
                     "duplicate metadata key " + quoted(repeated));
  return {};
}

// Stable counting sort of byName into dtype-descending order: names stay ascending within
// each dtype, in O(n) without a second comparison sort.
std::vector<uint32_t> writeOrder(const WriterTensor* tensors, const std::vector<uint32_t>& byName) {
  size_t start[kDtypeCount] = {};
  for (uint32_t i : byName) ++start[static_cast<int>(tensors[i].dtype)];
  size_t next = 0;
  for (int d = kDtypeCount - 1; d >= 0; --d) {
    size_t n = start[d];
    start[d] = next;
    next += n;
  }
  std::vector<uint32_t> order(byName.size());
  for (uint32_t i : byName) order[start[static_cast<int>(tensors[i].dtype)]++] = i;
  return order;
}

}  // namespace

Error planWrite(const WriterTensor* tensors, size_t count, const WriterMetadata* metadata,
                WritePlan& out) {
  out = WritePlan{};
  // Every entry takes more than one header byte; this also keeps indices within uint32_t.
  const size_t keyCount = metadata ? metadata->size() : 0;
  if (count > kMaxHeaderLength || keyCount > kMaxHeaderLength)
    return makeError(ErrorCode::HeaderTooLarge, 0,
                     decimal(count) + " tensors and " + decimal(keyCount) +
                         " metadata entries cannot fit in a header of at most " +
                         decimal(kMaxHeaderLength) + " bytes");

  uint64_t textBytes = 0;  // only sizes the reservation below
  for (size_t i = 0; i < count; ++i) {
    std::string_view name = tensors[i].name;
    if (!isUtf8(name)) return notUtf8(name, "tensor name", std::string(name));
    textBytes += name.size();
  }
  for (size_t k = 0; k < keyCount; ++k) {
    auto [key, value] = (*metadata)[k];
    if (!isUtf8(key)) return notUtf8(key, "metadata key");
    if (!isUtf8(value)) return notUtf8(value, "metadata value of " + quoted(key));
    textBytes += key.size() + value.size();
  }

  std::vector<uint32_t> byName(count), byKey(keyCount);
  for (uint32_t i = 0; i < byName.size(); ++i) byName[i] = i;
  for (uint32_t i = 0; i < byKey.size(); ++i) byKey[i] = i;
  if (Error e = checkKeys(tensors, byName, metadata, byKey)) return e;

  out.order = writeOrder(tensors, byName);
  out.offsets.resize(count);
  uint64_t dataLength = 0;
  for (uint32_t i : out.order) {
    const WriterTensor& t = tensors[i];
    if (Error e = checkByteLength(t, dataLength)) return e;
    if (t.byteLength > UINT64_MAX - dataLength)
      return makeError(ErrorCode::ValidationOverflow, dataLength,
                       "tensor " + quoted(t.name) + " of " + decimal(t.byteLength) +
                           " bytes at data offset " + decimal(dataLength) + " would end past 2^64",
                       std::string(t.name));
    out.offsets[i] = dataLength;
    dataLength += t.byteLength;
  }

  std::string& h = out.header;
  // 64-bit estimate, capped: in wasm32 it could otherwise wrap around size_t.
  h.reserve(std::min<uint64_t>(16 + textBytes + 80 * uint64_t{count} + 24 * byKey.size(),
                               8 + kMaxHeaderLength));
  h.assign(8, '\0');  // N goes here once the JSON is complete
  h += '{';
  if (metadata) {
    appendJsonString(h, kMetadataKey);
    h += ":{";
    for (size_t k = 0; k < byKey.size(); ++k) {
      if (k) h += ',';
      appendJsonString(h, (*metadata)[byKey[k]].first);
      h += ':';
      appendJsonString(h, (*metadata)[byKey[k]].second);
      if (h.size() - 8 > kMaxHeaderLength) return tooLarge(h.size() - 8, "at least ");
    }
    h += '}';
  }
  for (uint32_t i : out.order) {
    const WriterTensor& t = tensors[i];
    if (h.size() > 9) h += ',';  // 9: the prefix and '{', so an entry precedes this one
    appendJsonString(h, t.name);
    h += R"(:{"dtype":")";
    h += dtypeName(t.dtype);
    h += R"(","shape":[)";
    for (uint32_t d = 0; d < t.rank; ++d) {
      if (d) h += ',';
      appendDecimal(h, t.shape[d]);
    }
    h += R"(],"data_offsets":[)";
    appendDecimal(h, out.offsets[i]);
    h += ',';
    appendDecimal(h, out.offsets[i] + t.byteLength);
    h += "]}";
    // Stop early rather than grow a rejected header to its full size.
    if (h.size() - 8 > kMaxHeaderLength) return tooLarge(h.size() - 8, "at least ");
  }
  h += '}';

  const uint64_t padded = (h.size() - 8 + 7) / 8 * 8;
  if (padded > kMaxHeaderLength) return tooLarge(padded, "");
  if (dataLength > UINT64_MAX - 8 - padded)
    return makeError(ErrorCode::ValidationOverflow, 0,
                     decimal(dataLength) + " data bytes after a header of " + decimal(8 + padded) +
                         " bytes would end the file past 2^64");
  h.resize(8 + padded, ' ');
  for (int b = 0; b < 8; ++b) h[b] = static_cast<char>(padded >> (8 * b));
  out.fileLength = 8 + padded + dataLength;

  Header parsed;
  return parseHeader(reinterpret_cast<const uint8_t*>(h.data()) + 8, h.size() - 8, out.fileLength,
                     parsed);
}

Error planWriteFlat(const FlatWriteInput& in, WritePlan& out) {
  std::vector<WriterTensor> tensors(in.tensorCount);
  size_t nameAt = 0, dimAt = 0;
  for (uint32_t i = 0; i < in.tensorCount; ++i) {
    WriterTensor& t = tensors[i];
    t.name = {in.names + nameAt, in.nameLengths[i]};
    nameAt += in.nameLengths[i];
    t.dtype = static_cast<Dtype>(in.dtypes[i]);  // out-of-range codes are rejected by planWrite
    t.shape = in.dims + dimAt;
    t.rank = in.ranks[i];
    dimAt += in.ranks[i];
    t.byteLength = in.byteLengths[i];
  }
  WriterMetadata metadata;
  if (in.hasMetadata) {
    metadata.reserve(in.metadataCount);
    size_t at = 0;
    for (uint32_t k = 0; k < in.metadataCount; ++k) {
      std::string_view key(in.metadataStrings + at, in.metadataLengths[2 * k]);
      at += key.size();
      std::string_view value(in.metadataStrings + at, in.metadataLengths[2 * k + 1]);
      at += value.size();
      metadata.emplace_back(key, value);
    }
  }
  return planWrite(tensors.data(), tensors.size(), in.hasMetadata ? &metadata : nullptr, out);
}

}  // namespace st
