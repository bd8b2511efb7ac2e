#include "header.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "header_json.hpp"

namespace st {
namespace {

uint64_t saturatingAdd(uint64_t a, uint64_t b) { return a + b < a ? UINT64_MAX : a + b; }

bool checkedMul(uint64_t a, uint64_t b, uint64_t& out) {
  if (a != 0 && b > UINT64_MAX / a) return false;
  out = a * b;
  return true;
}

std::string shapeText(const Header& h, const TensorInfo& t) {
  std::string s = "[";
  for (uint32_t i = 0; i < t.rank; ++i) {
    if (i) s += ", ";
    s += std::to_string(h.shape(t)[i]);
  }
  return s + "]";
}

std::string offsetsText(const TensorInfo& t) {
  return "[" + std::to_string(t.begin) + ", " + std::to_string(t.end) + "]";
}

// Rule 5's duplicate check (this project's decision: the reference keeps the last one).
// Builds byName on the way, over the table already in file order.
Error checkDuplicates(Header& h, uint64_t headerStart) {
  h.byName.resize(h.tensors.size());
  for (uint32_t i = 0; i < h.byName.size(); ++i) h.byName[i] = i;
  std::sort(h.byName.begin(), h.byName.end(), [&h](uint32_t a, uint32_t b) {
    return h.name(h.tensors[a]) < h.name(h.tensors[b]);
  });
  for (size_t i = 1; i < h.byName.size(); ++i) {
    std::string_view name = h.name(h.tensors[h.byName[i]]);
    if (name == h.name(h.tensors[h.byName[i - 1]]))
      return makeError(ErrorCode::InvalidHeaderDeserialization, headerStart,
                       "duplicate tensor name \"" + std::string(name) + "\"", std::string(name));
  }
  std::vector<std::string_view> keys;
  keys.reserve(h.metadata.size());
  for (const MetadataEntry& m : h.metadata) keys.push_back(h.str(m.key));
  std::sort(keys.begin(), keys.end());
  for (size_t i = 1; i < keys.size(); ++i)
    if (keys[i] == keys[i - 1])
      return makeError(ErrorCode::InvalidHeaderDeserialization, headerStart,
                       "duplicate metadata key \"" + std::string(keys[i]) + "\"");
  return {};
}

// Rules 6-10, in the reference's order, over tensors already sorted by offsets.
Error validateLayout(const Header& h) {
  const uint64_t base = h.dataOffset();
  uint64_t expected = 0;
  for (const TensorInfo& t : h.tensors) {
    std::string name(h.name(t));
    if (t.begin != expected || t.end < t.begin) {
      std::string why = t.begin != expected
                            ? "begins at " + std::to_string(t.begin) + ", expected " +
                                  std::to_string(expected) + " (tensors must tile the data buffer)"
                            : "ends before it begins";
      return makeError(ErrorCode::InvalidOffset, saturatingAdd(base, t.begin),
                       "tensor \"" + name + "\" data_offsets " + offsetsText(t) + ": " + why, name);
    }
    expected = t.end;
    uint64_t elements = 1;
    for (uint32_t i = 0; i < t.rank; ++i)
      if (!checkedMul(elements, h.shape(t)[i], elements))
        return makeError(ErrorCode::ValidationOverflow, saturatingAdd(base, t.begin),
                         "tensor \"" + name + "\" shape " + shapeText(h, t) +
                             ": element count overflows 64 bits", name);
    uint64_t bits = 0;
    if (!checkedMul(elements, dtypeBits(t.dtype), bits))
      return makeError(ErrorCode::ValidationOverflow, saturatingAdd(base, t.begin),
                       "tensor \"" + name + "\" " + std::to_string(elements) + " elements of " +
                           dtypeName(t.dtype) + ": bit count overflows 64 bits", name);
    if (bits % 8 != 0)
      return makeError(ErrorCode::MisalignedSlice, saturatingAdd(base, t.begin),
                       "tensor \"" + name + "\" " + std::to_string(elements) + " elements of " +
                           dtypeName(t.dtype) + " are " + std::to_string(bits) +
                           " bits, not a whole number of bytes", name);
    if (t.end - t.begin != bits / 8)
      return makeError(ErrorCode::TensorInvalidInfo, saturatingAdd(base, t.begin),
                       "tensor \"" + name + "\" " + dtypeName(t.dtype) + " " + shapeText(h, t) +
                           " needs " + std::to_string(bits / 8) + " bytes but data_offsets " +
                           offsetsText(t) + " span " + std::to_string(t.end - t.begin), name);
  }
  uint64_t dataEnd = base + expected;
  if (dataEnd < base || dataEnd != h.fileLength)
    return makeError(ErrorCode::MetadataIncompleteBuffer, saturatingAdd(base, expected),
                     "tensors end at file byte " +
                         (dataEnd < base ? std::string("past 2^64") : std::to_string(dataEnd)) +
                         " but the file is " + std::to_string(h.fileLength) + " bytes");
  return {};
}

}  // namespace

size_t findInvalidUtf8(const uint8_t* p, size_t n) {
  size_t i = 0;
  while (i < n) {
    if (i + 8 <= n) {
      uint64_t word;
      std::memcpy(&word, p + i, 8);
      if ((word & 0x8080808080808080ull) == 0) {
        i += 8;
        continue;
      }
    }
    uint8_t c = p[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t need;
    uint8_t lo = 0x80, hi = 0xBF;  // the allowed range of the second byte
    if (c >= 0xC2 && c <= 0xDF) {
      need = 1;
    } else if (c >= 0xE0 && c <= 0xEF) {
      need = 2;
      if (c == 0xE0) lo = 0xA0;  // overlong
      if (c == 0xED) hi = 0x9F;  // surrogates
    } else if (c >= 0xF0 && c <= 0xF4) {
      need = 3;
      if (c == 0xF0) lo = 0x90;  // overlong
      if (c == 0xF4) hi = 0x8F;  // above U+10FFFF
    } else {
      return i;
    }
    if (n - i <= need) return i;
    if (p[i + 1] < lo || p[i + 1] > hi) return i;
    for (size_t k = 2; k <= need; ++k)
      if ((p[i + k] & 0xC0) != 0x80) return i;
    i += need + 1;
  }
  return n;
}

int64_t Header::find(std::string_view wanted) const {
  auto it = std::lower_bound(byName.begin(), byName.end(), wanted,
                             [this](uint32_t i, std::string_view w) { return name(tensors[i]) < w; });
  if (it == byName.end() || name(tensors[*it]) != wanted) return -1;
  return *it;
}

uint64_t Header::elementCount(const TensorInfo& t) const {
  uint64_t n = 1;
  for (uint32_t i = 0; i < t.rank; ++i) n *= shape(t)[i];
  return n;
}

Error readHeaderLength(const uint8_t* prefix, size_t available, uint64_t fileLength,
                       uint64_t& headerLength) {
  if (fileLength < 8)
    return makeError(ErrorCode::HeaderTooSmall, 0,
                     "file is " + std::to_string(fileLength) +
                         " bytes, shorter than the 8-byte header length");
  if (available < 8)
    return makeError(ErrorCode::HeaderTooSmall, 0,
                     "only " + std::to_string(available) + " of the 8 header length bytes were given");
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | prefix[i];
  if (n > kMaxHeaderLength)
    return makeError(ErrorCode::HeaderTooLarge, 0,
                     "header length " + std::to_string(n) + " exceeds the limit of " +
                         std::to_string(kMaxHeaderLength) + " bytes");
  if (8 + n > fileLength)  // n <= 1e8: no overflow
    return makeError(ErrorCode::InvalidHeaderLength, 0,
                     "header of " + std::to_string(n) + " bytes ends at file byte " +
                         std::to_string(8 + n) + " but the file is " + std::to_string(fileLength) +
                         " bytes");
  headerLength = n;
  return {};
}

Error parseHeader(const uint8_t* json, size_t length, uint64_t fileLength, Header& out) {
  out = Header{};
  out.headerLength = length;
  out.fileLength = fileLength;
  size_t bad = findInvalidUtf8(json, length);
  if (bad != length)
    return makeError(ErrorCode::InvalidHeader, 8 + bad,
                     "header is not valid UTF-8: bad byte 0x" +
                         std::string(1, "0123456789ABCDEF"[json[bad] >> 4]) +
                         std::string(1, "0123456789ABCDEF"[json[bad] & 15]) + " at header byte " +
                         std::to_string(bad));
  const char* text = reinterpret_cast<const char*>(json);
  if (Error e = parseHeaderJson(text, text + length, 8, out)) return e;
  std::stable_sort(out.tensors.begin(), out.tensors.end(),
                   [](const TensorInfo& a, const TensorInfo& b) {
                     return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
                   });
  if (Error e = checkDuplicates(out, 8)) return e;
  return validateLayout(out);
}

Error parseFile(const uint8_t* bytes, size_t available, uint64_t fileLength, Header& out) {
  uint64_t n = 0;
  if (Error e = readHeaderLength(bytes, available, fileLength, n)) return e;
  if (available - 8 < n)
    return makeError(ErrorCode::InvalidHeaderLength, 0,
                     "header of " + std::to_string(n) + " bytes but only " +
                         std::to_string(available - 8) + " were given");
  return parseHeader(bytes + 8, static_cast<size_t>(n), fileLength, out);
}

}  // namespace st
