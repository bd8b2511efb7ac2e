#include "header.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "header_json.hpp"
#include "merge_sort.hpp"
#include "name_order.hpp"

namespace st {
namespace {

uint64_t saturatingAdd(uint64_t a, uint64_t b) { return a + b < a ? UINT64_MAX : a + b; }

bool checkedMul(uint64_t a, uint64_t b, uint64_t& out) {
  if (a != 0 && b > UINT64_MAX / a) return false;
  out = a * b;
  return true;
}

std::string offsetsText(const TensorInfo& t) {
  return "[" + decimal(t.begin) + ", " + decimal(t.end) + "]";
}

// Up to the first 8 bytes of a name, packed little-endian into an integer.
constexpr uint64_t packName(const char* s, size_t length) {
  uint64_t key = 0;
  for (size_t i = 0; i < length && i < 8; ++i)
    key |= uint64_t{static_cast<unsigned char>(s[i])} << (8 * i);
  return key;
}

template <size_t N>
constexpr uint64_t packName(const char (&s)[N]) {
  return packName(s, N - 1);
}

// parseDtype without trying 22 names in turn: one switch on the packed bytes, then one exact
// comparison with the dtype's name.
bool matchDtype(const char* text, size_t length, Dtype& out) {
  if (length == 0 || length > 11) return false;
  Dtype d;
  switch (packName(text, length)) {
    case packName("BOOL"): d = Dtype::BOOL; break;
    case packName("F4"): d = Dtype::F4; break;
    case packName("F6_E2M3"): d = Dtype::F6_E2M3; break;
    case packName("F6_E3M2"): d = Dtype::F6_E3M2; break;
    case packName("U8"): d = Dtype::U8; break;
    case packName("I8"): d = Dtype::I8; break;
    case packName("F8_E5M2"): d = Dtype::F8_E5M2; break;
    case packName("F8_E4M3"): d = Dtype::F8_E4M3; break;
    case packName("F8_E8M0"): d = Dtype::F8_E8M0; break;
    case packName("F8_E4M3F"): d = Dtype::F8_E4M3FNUZ; break;  // F8_E4M3FNUZ
    case packName("F8_E5M2F"): d = Dtype::F8_E5M2FNUZ; break;  // F8_E5M2FNUZ
    case packName("I16"): d = Dtype::I16; break;
    case packName("U16"): d = Dtype::U16; break;
    case packName("F16"): d = Dtype::F16; break;
    case packName("BF16"): d = Dtype::BF16; break;
    case packName("I32"): d = Dtype::I32; break;
    case packName("U32"): d = Dtype::U32; break;
    case packName("F32"): d = Dtype::F32; break;
    case packName("C64"): d = Dtype::C64; break;
    case packName("F64"): d = Dtype::F64; break;
    case packName("I64"): d = Dtype::I64; break;
    case packName("U64"): d = Dtype::U64; break;
    default: return false;
  }
  const char* name = dtypeName(d);
  if (std::strlen(name) != length || std::memcmp(name, text, length) != 0) return false;
  out = d;
  return true;
}

// The fast path. Real writers produce one shape of header: an object of tensor entries
// {"dtype": .., "shape": [..], "data_offsets": [b, e]} (fields in any order), perhaps a
// __metadata__ map of plain strings or null, JSON whitespace anywhere between tokens, no
// escapes, numbers as plain decimal integers. This scanner reads exactly that subset in one
// pass and builds the table the SAX path (header_json.cpp) would (in the same arena order: a
// name when its key is read, a metadata key then its value). Anything else (an escape, a
// control byte, an unknown field, the array or dtype-map form, a bad number, any error) makes
// it give up, and the SAX path parses the header from the start: that path decides, and words
// every error. The bytes are already known to be valid UTF-8, as the lexer would require.
class SimpleHeaderScanner {
 public:
  SimpleHeaderScanner(const char* begin, const char* end, Header& out)
      : p_(begin), end_(end), out_(out) {}

  bool scan() {
    if (!take('{')) return false;
    skipSpace();
    if (p_ != end_ && *p_ == '}') {
      ++p_;
      return atEnd();
    }
    bool sawMetadata = false;
    for (;;) {
      skipSpace();
      const char* key;
      uint32_t length;
      if (!string(key, length) || !take(':')) return false;
      if (length == 12 && std::memcmp(key, "__metadata__", 12) == 0) {
        if (sawMetadata || !metadata()) return false;
        sawMetadata = true;
      } else if (!entry(key, length)) {
        return false;
      }
      skipSpace();
      if (p_ == end_) return false;
      const char c = *p_++;
      if (c == '}') return atEnd();
      if (c != ',') return false;
    }
  }

 private:
  static bool isSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

  void skipSpace() {
    // Eight spaces at a time: writers pad headers with spaces, up to most of their length
    // (GLM-5-NVFP4's are 100,000 bytes each, about a fifth of it JSON).
    constexpr uint64_t kSpaces = 0x2020202020202020ull;
    while (end_ - p_ >= 8) {
      uint64_t word;
      std::memcpy(&word, p_, 8);
      if (word != kSpaces) break;
      p_ += 8;
    }
    while (p_ != end_ && isSpace(*p_)) ++p_;
  }

  // Whitespace, then `c`.
  bool take(char c) {
    skipSpace();
    if (p_ == end_ || *p_ != c) return false;
    ++p_;
    return true;
  }

  bool atEnd() {
    skipSpace();
    return p_ == end_;
  }

  // A string without escapes or control bytes; on success [text, text + length) is its content.
  bool string(const char*& text, uint32_t& length) {
    if (p_ == end_ || *p_ != '"') return false;
    const char* q = ++p_;
    for (;;) {
      while (end_ - q >= 8 && !mayEndString(q)) q += 8;
      if (q == end_) return false;
      const unsigned char c = static_cast<unsigned char>(*q);
      if (c == '"') {
        text = p_;
        length = static_cast<uint32_t>(q - p_);
        p_ = q + 1;
        return true;
      }
      if (c == '\\' || c < 0x20) return false;
      ++q;
    }
  }

  // Whether any of the 8 bytes at q is '"', '\\' or below 0x20 (exact when none is: the
  // classic has-zero-byte tests, whose false alarms above a true hit do not matter here).
  static bool mayEndString(const char* q) {
    constexpr uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
    uint64_t w;
    std::memcpy(&w, q, 8);
    const uint64_t quote = w ^ (ones * '"'), backslash = w ^ (ones * '\\');
    return (((quote - ones) & ~quote) | ((backslash - ones) & ~backslash) |
            ((w - ones * 0x20) & ~w)) &
           highs;
  }

  // A plain non-negative decimal integer that fits 64 bits ("0", or no leading zero).
  bool number(uint64_t& value) {
    skipSpace();
    if (p_ == end_ || *p_ < '0' || *p_ > '9') return false;
    if (*p_ == '0') {
      ++p_;
      value = 0;
      return true;
    }
    uint64_t v = 0;
    while (p_ != end_ && *p_ >= '0' && *p_ <= '9') {
      const uint64_t digit = static_cast<uint64_t>(*p_ - '0');
      if (v > (UINT64_MAX - digit) / 10) return false;  // the lexer reads it as a float
      v = v * 10 + digit;
      ++p_;
    }
    value = v;
    return true;
  }

  StringRef append(const char* text, uint32_t length) {
    StringRef ref{static_cast<uint32_t>(out_.strings.size()), length};
    out_.strings.append(text, length);
    return ref;
  }

  // `null` or an object of string values.
  bool metadata() {
    skipSpace();
    if (end_ - p_ >= 4 && std::memcmp(p_, "null", 4) == 0) {
      p_ += 4;
      return true;
    }
    if (!take('{')) return false;
    out_.hasMetadata = true;
    skipSpace();
    if (p_ != end_ && *p_ == '}') {
      ++p_;
      return true;
    }
    for (;;) {
      skipSpace();
      const char* text;
      uint32_t length;
      MetadataEntry m;
      if (!string(text, length)) return false;
      m.key = append(text, length);
      skipSpace();
      if (!take(':')) return false;
      skipSpace();
      if (!string(text, length)) return false;
      m.value = append(text, length);
      out_.metadata.push_back(m);
      skipSpace();
      if (p_ == end_) return false;
      const char c = *p_++;
      if (c == '}') return true;
      if (c != ',') return false;
    }
  }

  // {"dtype": .., "shape": [..], "data_offsets": [b, e]}, each field once, in any order.
  bool entry(const char* name, uint32_t nameLength) {
    TensorInfo t;
    t.name = append(name, nameLength);
    t.dimsOffset = static_cast<uint32_t>(out_.dims.size());
    if (!take('{')) return false;
    unsigned seen = 0;
    for (;;) {
      skipSpace();
      const char* key;
      uint32_t length;
      if (!string(key, length) || !take(':')) return false;
      skipSpace();
      if (length == 5 && std::memcmp(key, "dtype", 5) == 0 && !(seen & 1u)) {
        const char* text;
        uint32_t n;
        if (!string(text, n) || !matchDtype(text, n, t.dtype)) return false;
        seen |= 1u;
      } else if (length == 5 && std::memcmp(key, "shape", 5) == 0 && !(seen & 2u)) {
        if (!take('[')) return false;
        skipSpace();
        if (p_ != end_ && *p_ == ']') {
          ++p_;
        } else {
          for (;;) {
            uint64_t dim;
            if (!number(dim)) return false;
            out_.dims.push_back(dim);
            ++t.rank;
            skipSpace();
            if (p_ == end_) return false;
            const char c = *p_++;
            if (c == ']') break;
            if (c != ',') return false;
          }
        }
        seen |= 2u;
      } else if (length == 12 && std::memcmp(key, "data_offsets", 12) == 0 && !(seen & 4u)) {
        if (!take('[') || !number(t.begin) || !take(',') || !number(t.end) || !take(']'))
          return false;
        seen |= 4u;
      } else {
        return false;  // an unknown or repeated field
      }
      skipSpace();
      if (p_ == end_) return false;
      const char c = *p_++;
      if (c == '}') break;
      if (c != ',') return false;
    }
    if (seen != 7u) return false;
    out_.tensors.push_back(t);
    return true;
  }

  const char* p_;
  const char* const end_;
  Header& out_;
};

// Rule 5's duplicate check (this project's decision: the reference keeps the last one).
// Builds byName on the way, over the table already in file order.
Error checkDuplicates(Header& h, uint64_t headerStart) {
  const NameOf tensorName = [](const void* header, uint32_t i) {
    const Header& hh = *static_cast<const Header*>(header);
    return hh.name(hh.tensors[i]);
  };
  const NameOf metadataKey = [](const void* header, uint32_t i) {
    const Header& hh = *static_cast<const Header*>(header);
    return hh.str(hh.metadata[i].key);
  };
  std::string_view repeated;
  h.byName = orderByName(h.tensors.size(), tensorName, &h);
  if (findRepeat(h.byName, tensorName, &h, repeated))
    return makeError(ErrorCode::InvalidHeaderDeserialization, headerStart,
                     "duplicate tensor name \"" + std::string(repeated) + "\"",
                     std::string(repeated));
  if (findRepeat(orderByName(h.metadata.size(), metadataKey, &h), metadataKey, &h, repeated))
    return makeError(ErrorCode::InvalidHeaderDeserialization, headerStart,
                     "duplicate metadata key \"" + std::string(repeated) + "\"");
  return {};
}

// Rules 6-10, in the reference's order, over tensors already sorted by offsets.
Error validateLayout(const Header& h) {
  const uint64_t base = h.dataOffset();
  uint64_t expected = 0;
  for (const TensorInfo& t : h.tensors) {
    // Built only for an error message: a valid header costs no allocation per tensor.
    const auto tensorName = [&h, &t] { return std::string(h.name(t)); };
    if (t.begin != expected || t.end < t.begin) {
      std::string why = t.begin != expected
                            ? "begins at " + decimal(t.begin) + ", expected " + decimal(expected) +
                                  " (tensors must tile the data buffer)"
                            : "ends before it begins";
      return makeError(
          ErrorCode::InvalidOffset, saturatingAdd(base, t.begin),
          "tensor \"" + tensorName() + "\" data_offsets " + offsetsText(t) + ": " + why,
          tensorName());
    }
    expected = t.end;
    uint64_t elements = 1;
    for (uint32_t i = 0; i < t.rank; ++i)
      if (!checkedMul(elements, h.shape(t)[i], elements))
        return makeError(ErrorCode::ValidationOverflow, saturatingAdd(base, t.begin),
                         "tensor \"" + tensorName() + "\" shape " + shapeText(h.shape(t), t.rank) +
                             ": element count overflows 64 bits",
                         tensorName());
    uint64_t bits = 0;
    if (!checkedMul(elements, dtypeBits(t.dtype), bits))
      return makeError(ErrorCode::ValidationOverflow, saturatingAdd(base, t.begin),
                       "tensor \"" + tensorName() + "\" " + decimal(elements) + " elements of " +
                           dtypeName(t.dtype) + ": bit count overflows 64 bits",
                       tensorName());
    if (bits % 8 != 0)
      return makeError(ErrorCode::MisalignedSlice, saturatingAdd(base, t.begin),
                       "tensor \"" + tensorName() + "\" " + decimal(elements) + " elements of " +
                           dtypeName(t.dtype) + " are " + decimal(bits) +
                           " bits, not a whole number of bytes",
                       tensorName());
    if (t.end - t.begin != bits / 8)
      return makeError(ErrorCode::TensorInvalidInfo, saturatingAdd(base, t.begin),
                       "tensor \"" + tensorName() + "\" " + dtypeName(t.dtype) + " " +
                           shapeText(h.shape(t), t.rank) + " needs " + decimal(bits / 8) +
                           " bytes but data_offsets " + offsetsText(t) + " span " +
                           decimal(t.end - t.begin),
                       tensorName());
  }
  uint64_t dataEnd = base + expected;
  if (dataEnd < base || dataEnd != h.fileLength)
    return makeError(ErrorCode::MetadataIncompleteBuffer, saturatingAdd(base, expected),
                     "tensors end at file byte " +
                         (dataEnd < base ? std::string("past 2^64") : decimal(dataEnd)) +
                         " but the file is " + decimal(h.fileLength) + " bytes");
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
  auto it =
      std::lower_bound(byName.begin(), byName.end(), wanted,
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
    return makeError(
        ErrorCode::HeaderTooSmall, 0,
        "file is " + decimal(fileLength) + " bytes, shorter than the 8-byte header length");
  if (available < 8)
    return makeError(ErrorCode::HeaderTooSmall, 0,
                     "only " + decimal(available) + " of the 8 header length bytes were given");
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | prefix[i];
  if (n > kMaxHeaderLength)
    return makeError(ErrorCode::HeaderTooLarge, 0,
                     "header length " + decimal(n) + " exceeds the limit of " +
                         decimal(kMaxHeaderLength) + " bytes");
  if (8 + n > fileLength)  // n <= 1e8: no overflow
    return makeError(ErrorCode::InvalidHeaderLength, 0,
                     "header of " + decimal(n) + " bytes ends at file byte " + decimal(8 + n) +
                         " but the file is " + decimal(fileLength) + " bytes");
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
                         decimal(bad));
  const char* text = reinterpret_cast<const char*>(json);
  // The common shape of header in one fast pass; anything else (errors included) through
  // nlohmann's SAX parser, from a clean table.
  if (!SimpleHeaderScanner(text, text + length, out).scan()) {
    out.strings.clear();
    out.dims.clear();
    out.tensors.clear();
    out.metadata.clear();
    out.hasMetadata = false;
    if (Error e = parseHeaderJson(text, text + length, 8, out)) return e;
  }
  // Writers list tensors in offset order, mostly: then mergeSort only checks that they are.
  mergeSort(out.tensors, [](const TensorInfo& a, const TensorInfo& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  if (Error e = checkDuplicates(out, 8)) return e;
  return validateLayout(out);
}

Error parseFile(const uint8_t* bytes, size_t available, uint64_t fileLength, Header& out) {
  uint64_t n = 0;
  if (Error e = readHeaderLength(bytes, available, fileLength, n)) return e;
  if (available - 8 < n)
    return makeError(
        ErrorCode::InvalidHeaderLength, 0,
        "header of " + decimal(n) + " bytes but only " + decimal(available - 8) + " were given");
  return parseHeader(bytes + 8, static_cast<size_t>(n), fileLength, out);
}

}  // namespace st
