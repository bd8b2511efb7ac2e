#include "index_map.hpp"

#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <utility>

#include "api.hpp"
#include "json_text.hpp"
#include "merge_sort.hpp"

namespace st {
namespace {

constexpr uint32_t kMaxNames = 1u << 30;
constexpr uint64_t kMaxBytes = UINT32_MAX;  // the name store's offsets are uint32
constexpr uint32_t kNone = UINT32_MAX;
// The longest tensor name (and top-level key) and shard path kept, and the metadata's text: real
// ones are tens of bytes (metadata: a total_size). Unbounded, one string the length of the index
// is held whole, and copied as it grows: about 4 times maxIndexBytes of memory for a refusal.
constexpr size_t kMaxNameBytes = 64 * 1024;
constexpr size_t kMaxPathBytes = 4096;
constexpr size_t kMaxMetadataBytes = 1024 * 1024;

bool isSpace(uint8_t b) { return b == ' ' || b == '\n' || b == '\r' || b == '\t'; }
bool isDigit(uint8_t b) { return b >= '0' && b <= '9'; }

// A string byte that needs no look: not '"', '\', a control character or non-ASCII.
bool plainByte(uint8_t b) { return b >= 0x20 && b < 0x80 && b != '"' && b != '\\'; }

// Whether 8 string bytes are all plain (per byte: below 0x20 borrows into bit 7, '"' and '\'
// become 0 and borrow, non-ASCII has bit 7; a borrow only ever follows a byte already caught).
bool plainWord(uint64_t w) {
  constexpr uint64_t ones = 0x0101010101010101ull;
  const uint64_t quote = w ^ (ones * '"'), backslash = w ^ (ones * '\\');
  return !(((w - ones * 0x20) | (quote - ones) | (backslash - ones) | w) & (ones * 0x80));
}

// A UTF-8 lead byte: the continuation bytes it needs and the range of the first of them (the
// others are 80-BF), which rules out overlong forms, surrogates and code points past U+10FFFF.
bool utf8Lead(uint8_t b, uint8_t& need, uint8_t& lo, uint8_t& hi) {
  need = b < 0xE0 ? 1 : b < 0xF0 ? 2 : 3;
  lo = b == 0xE0 ? 0xA0 : b == 0xF0 ? 0x90 : 0x80;
  hi = b == 0xED ? 0x9F : b == 0xF4 ? 0x8F : 0xBF;
  return b >= 0xC2 && b <= 0xF4;
}

// A byte as messages show it: 'x' when printable ASCII, else byte 0xNN.
struct ByteText {
  char text[12];
};
ByteText byteText(uint8_t b) {
  ByteText t;
  std::snprintf(t.text, sizeof t.text, b > 0x20 && b < 0x7f ? "'%c'" : "byte 0x%02X", b);
  return t;
}

using ull = unsigned long long;

std::string quoted(std::string_view s) {
  std::string out;
  appendJsonString(out, s);
  return out;
}

void appendUtf8(std::string& out, uint32_t u) {
  if (u < 0x80) {
    out += static_cast<char>(u);
  } else if (u < 0x800) {
    out += static_cast<char>(0xC0 | u >> 6);
    out += static_cast<char>(0x80 | (u & 0x3F));
  } else if (u < 0x10000) {
    out += static_cast<char>(0xE0 | u >> 12);
    out += static_cast<char>(0x80 | (u >> 6 & 0x3F));
    out += static_cast<char>(0x80 | (u & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | u >> 18);
    out += static_cast<char>(0x80 | (u >> 12 & 0x3F));
    out += static_cast<char>(0x80 | (u >> 6 & 0x3F));
    out += static_cast<char>(0x80 | (u & 0x3F));
  }
}

// UTF-16 code units of valid UTF-8: one per character, two from U+10000 (4-byte sequences).
uint64_t utf16Length(std::string_view s) {
  uint64_t n = 0;
  for (unsigned char c : s) n += ((c & 0xC0) != 0x80) + (c >= 0xF0);
  return n;
}

// A path segment JS's checkShardPath refuses: empty, or one or two of '.' and '%2e'.
bool dotSegment(std::string_view s) {
  int dots = 0;
  for (size_t i = 0; i < s.size(); ++dots) {
    if (s[i] == '.')
      i += 1;
    else if (s.size() - i >= 3 && s[i] == '%' && s[i + 1] == '2' && (s[i + 2] | 0x20) == 'e')
      i += 3;
    else
      return false;
  }
  return dots <= 2;
}

bool isAlpha(char c) { return (c | 0x20) >= 'a' && (c | 0x20) <= 'z'; }

}  // namespace

bool utf16Less(std::string_view a, std::string_view b) {
  const size_t n = a.size() < b.size() ? a.size() : b.size();
  size_t i = 0;
  while (i < n && a[i] == b[i]) ++i;
  if (i == n) return a.size() < b.size();
  const uint8_t x = a[i], y = b[i];
  // From U+10000 (lead F0-F4) UTF-16 has a surrogate pair, D800-DBFF, which sorts before
  // U+E000-U+FFFF (lead EE, EF). Elsewhere UTF-8's byte order is UTF-16's.
  if (x >= 0xF0 && (y == 0xEE || y == 0xEF)) return true;
  if (y >= 0xF0 && (x == 0xEE || x == 0xEF)) return false;
  return x < y;
}

bool safeShardPath(std::string_view path) {
  if (path.empty() || path[0] == '/') return false;
  if (isAlpha(path[0])) {  // a scheme: [a-z][a-z0-9+.-]*:
    size_t i = 1;
    while (i < path.size() && (isAlpha(path[i]) || isDigit(path[i]) || path[i] == '+' ||
                               path[i] == '.' || path[i] == '-'))
      ++i;
    if (i < path.size() && path[i] == ':') return false;
  }
  for (char c : path)
    if (c == '\\' || c == '?' || c == '#' || c == '\0') return false;
  for (size_t start = 0;;) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    if (dotSegment(path.substr(start, end - start))) return false;
    if (end == path.size()) return true;
    start = end + 1;
  }
}

// Messages are printf formats (the module's snprintf is small_printf.hpp's): a call per message
// is far less code than building each from strings.
bool IndexParser::fail(uint64_t offset, const char* format, ...) {
  if (error_) return false;
  va_list args, again;
  va_start(args, format);
  va_copy(again, args);
  std::string message(static_cast<size_t>(std::vsnprintf(nullptr, 0, format, args)), '\0');
  std::vsnprintf(&message[0], message.size() + 1, format, again);
  va_end(again);
  va_end(args);
  error_ = makeError(ErrorCode::InvalidIndex, offset, std::move(message));
  return false;
}

bool IndexParser::syntax(uint64_t offset, uint8_t found, const char* expected) {
  return fail(offset, "not valid JSON at line %llu, column %llu (byte %llu): expected %s, found %s",
              ull(line_), ull(offset - lineStart_ + 1), ull(offset), expected,
              byteText(found).text);
}

bool IndexParser::feed(const uint8_t* p, size_t n) {
  if (error_) return false;
  if (finished_) return fail(base_, "more bytes after finish()");
  if (n > kMaxBytes - base_)
    return fail(base_, "the index is over 4 GiB; real ones are at most tens of MB");
  captureFrom_ = 0;
  for (size_t k = 0; headLength_ < sizeof head_ && k < n; ++k) head_[headLength_++] = p[k];
  size_t i = 0;
  while (i < n && !error_) {
    switch (state_) {
      case State::String: i = stringBytes(p, n, i); break;
      case State::Number: i = numberBytes(p, n, i); break;
      case State::Literal:
        if (p[i] != static_cast<uint8_t>(literal_[literalPos_])) {
          syntax(at(i), p[i], literal_[0] == 't' ? "true" : literal_[0] == 'f' ? "false" : "null");
          break;
        }
        ++i;
        if (!literal_[++literalPos_]) valueDone(p, i);
        break;
      case State::Bom:
        if (p[i] == static_cast<uint8_t>("\xEF\xBB\xBF"[bomRead_])) {
          ++i;
          if (++bomRead_ == 3) state_ = State::Start;
        } else if (bomRead_ == 0) {
          state_ = State::Start;
        } else {
          notAnIndex(at(i), p[i]);
        }
        break;
      case State::Rejected:
        notAnIndex(0, head_[0]);
        i = n;
        break;
      default:
        while (i < n && isSpace(p[i])) {
          if (p[i] == '\n') ++line_, lineStart_ = at(i) + 1;
          ++i;
        }
        if (i == n) break;
        if (state_ == State::Start && p[i] != '{') {
          notAnIndex(at(i), p[i]);
          i = n;
          break;
        }
        structural(p, i);
        ++i;
    }
  }
  if (error_) return false;
  if (capturing_) {
    if (metadata_.size() + (n - captureFrom_) > kMaxMetadataBytes) return tooMuchMetadata();
    metadata_.append(reinterpret_cast<const char*>(p) + captureFrom_, n - captureFrom_);
  }
  base_ += n;
  return true;
}

bool IndexParser::tooMuchMetadata() {
  return fail(metadataAt_,
              "the metadata at byte %llu is over %zu bytes, the most an index's may have here",
              ull(metadataAt_), kMaxMetadataBytes);
}

void IndexParser::notAnIndex(uint64_t offset, uint8_t b, bool final) {
  // At the first byte, the first 9 tell a shard: wait for them, so that the message does not
  // depend on how the input is split.
  if (offset == 0 && headLength_ < sizeof head_ && !final) {
    state_ = State::Rejected;
    return;
  }
  const char* why =
      b == '<' ? "it looks like an HTML or XML page; on the Hugging Face Hub, a /resolve/ URL "
                 "gives the file itself"
      : b == '[' || b == '"' || b == 't' || b == 'f' || b == 'n'
          ? "it is JSON, but an index is an object: {\"weight_map\": {...}}"
          : "it is not JSON; is it a .safetensors shard (they start with an 8-byte header "
            "length) rather than the *.safetensors.index.json?";
  uint64_t length = 0;
  for (int k = 7; k >= 0; --k) length = length << 8 | head_[k];
  if (offset == 0 && headLength_ == sizeof head_ && head_[8] == '{')
    fail(0,
         "the index starts with %s where an index starts with '{': it looks like a "
         ".safetensors shard (an 8-byte header length, %llu, then '{'), not the "
         "*.safetensors.index.json that lists the shards: open the index",
         byteText(b).text, ull(length));
  else
    fail(offset, "the index's first character is %s (byte %llu) where an index starts with '{': %s",
         byteText(b).text, ull(offset), why);
}

void IndexParser::structural(const uint8_t* p, size_t i) {
  const uint8_t b = p[i];
  const bool array = isArray(depth_);
  switch (state_) {
    case State::Start: open(false, i); return;
    case State::KeyOrEnd:
      if (b == '}') return close(p, i);
      [[fallthrough]];
    case State::Key:
      if (b != '"')
        syntax(at(i), b, state_ == State::Key ? "a string key" : "a string key or '}'");
      else if (depth_ == 1)
        startString(Role::TopKey, true, i);
      else
        startString(inWeightMap_ && depth_ == 2 && !skipEntries_ ? Role::Name : Role::Other, true,
                    i);
      return;
    case State::Colon:
      if (b == ':')
        state_ = State::Value;
      else
        syntax(at(i), b, "':' after the key");
      return;
    case State::ValueOrEnd:
      if (b == ']') return close(p, i);
      [[fallthrough]];
    case State::Value: return startValue(p, i);
    case State::AfterValue:
      if (b == ',')
        state_ = array ? State::Value : State::Key;
      else if (b == (array ? ']' : '}'))
        close(p, i);
      else
        syntax(at(i), b, array ? "',' or ']'" : "',' or '}'");
      return;
    case State::Done:
      fail(at(i),
           "bytes after the index's closing '}' at byte %llu (found %s): two indexes in one "
           "file, or a corrupt end",
           ull(at(i)), byteText(b).text);
      return;
    default: return;
  }
}

void IndexParser::startValue(const uint8_t* p, size_t i) {
  const uint8_t b = p[i];
  Role role = Role::Other;
  if (depth_ == 1 && top_ == Top::WeightMap && b != '{') {
    fail(at(i),
         "\"weight_map\" is not an object (it starts with %s): an index maps each tensor "
         "name to its shard file, {\"weight_map\": {\"model.embed_tokens.weight\": "
         "\"model-00001-of-00002.safetensors\", ...}}",
         byteText(b).text);
    return;
  }
  if (depth_ == 1 && top_ == Top::Metadata) {
    if (b != '{' && b != 'n') {
      fail(at(i),
           "\"metadata\" is not an object or null (it starts with %s): an index's metadata "
           "is an object such as {\"total_size\": 4305}",
           byteText(b).text);
      return;
    }
    capturing_ = true;
    captureFrom_ = i;
    metadataAt_ = at(i);
  }
  if (depth_ == 2 && inWeightMap_ && !skipEntries_) {
    if (b == '"')
      role = Role::ShardPath;
    else if (!entryError(b))
      return;
  }
  switch (b) {
    case '"': return startString(role, false, i);
    case '{': return open(false, i);
    case '[': return open(true, i);
    case 't': literal_ = "true"; break;
    case 'f': literal_ = "false"; break;
    case 'n': literal_ = "null"; break;
    default:
      if (b != '-' && !isDigit(b)) {
        syntax(at(i), b, "a value");
        return;
      }
      state_ = State::Number;
      num_ = b == '-' ? Num::Minus : b == '0' ? Num::Zero : Num::Int;
      return;
  }
  state_ = State::Literal;
  literalPos_ = 1;
}

void IndexParser::open(bool array, size_t i) {
  if (depth_ == kMaxDepth) {
    fail(at(i), "arrays and objects nest deeper than %u levels at byte %llu", kMaxDepth,
         ull(at(i)));
    return;
  }
  ++depth_;
  const uint64_t bit = uint64_t(1) << (depth_ % 64);
  kinds_[depth_ / 64] = array ? kinds_[depth_ / 64] | bit : kinds_[depth_ / 64] & ~bit;
  if (depth_ == 2 && top_ == Top::WeightMap) inWeightMap_ = true;
  state_ = array ? State::ValueOrEnd : State::KeyOrEnd;
}

void IndexParser::close(const uint8_t* p, size_t i) {
  if (--depth_ == 0)
    state_ = State::Done;
  else
    valueDone(p, i + 1);
}

void IndexParser::valueDone(const uint8_t* p, size_t end) {
  state_ = State::AfterValue;
  if (depth_ != 1) return;
  if (capturing_) {
    if (metadata_.size() + (end - captureFrom_) > kMaxMetadataBytes) return void(tooMuchMetadata());
    metadata_.append(reinterpret_cast<const char*>(p) + captureFrom_, end - captureFrom_);
    capturing_ = false;
  }
  inWeightMap_ = false;
  top_ = Top::Other;
}

void IndexParser::startString(Role role, bool key, size_t i) {
  state_ = State::String;
  role_ = role;
  key_ = key;
  stringAt_ = at(i);
  if (role == Role::Name) entryAt_ = stringAt_;
  nonAscii_ = false;
  out_ = key ? &name_ : &value_;
  if (role != Role::Other) out_->clear();
}

size_t IndexParser::stringBytes(const uint8_t* p, size_t n, size_t i) {
  const bool decode = role_ != Role::Other;
  while (i < n) {
    if (utf8Need_) {
      const uint8_t b = p[i];
      if (b < utf8Lo_ || b > utf8Hi_) {
        fail(at(i),
             "byte %llu (%s) breaks a UTF-8 sequence in a string: the index must be UTF-8 text",
             ull(at(i)), byteText(b).text);
        return n;
      }
      if (decode) *out_ += static_cast<char>(b);
      utf8Lo_ = 0x80, utf8Hi_ = 0xBF;
      --utf8Need_;
      ++i;
      continue;
    }
    if (escape_ != Escape::None) {
      if (!escapeByte(p[i], at(i))) return n;
      ++i;
      continue;
    }
    if (highSurrogate_ && p[i] != '\\' && !loneSurrogate(at(i))) return n;
    const size_t run = i;
    for (uint64_t w; i + 8 <= n; i += 8) {
      std::memcpy(&w, p + i, 8);
      if (!plainWord(w)) break;
    }
    while (i < n && plainByte(p[i])) ++i;
    if (decode) {
      // Checked before the bytes are kept (an escape or a character adds at most 4, checked here
      // on the next pass, before the closing quote).
      const size_t most = role_ == Role::ShardPath ? kMaxPathBytes : kMaxNameBytes;
      if (out_->size() + (i - run) > most) {
        fail(stringAt_,
             "the %s at byte %llu is over %zu bytes (%zu or more), the most an index's %s may "
             "have here (real ones are tens of bytes)",
             role_ == Role::Name        ? "tensor name"
             : role_ == Role::ShardPath ? "shard path"
                                        : "key",
             ull(stringAt_), most, out_->size() + (i - run),
             role_ == Role::ShardPath ? "shard path" : "name");
        return n;
      }
      if (i > run) out_->append(reinterpret_cast<const char*>(p) + run, i - run);
    }
    if (i == n) return n;
    const uint8_t b = p[i++];
    if (b == '"') {
      stringDone(p, i);
      return i;
    }
    if (b == '\\') {
      escape_ = Escape::Backslash;
    } else if (b < 0x20) {
      fail(at(i - 1),
           "a raw control character (%s) in a string at byte %llu: JSON writes it escaped "
           "(\\n, \\u0000...)",
           byteText(b).text, ull(at(i - 1)));
      return n;
    } else if (!utf8Lead(b, utf8Need_, utf8Lo_, utf8Hi_)) {
      utf8Need_ = 0;
      fail(at(i - 1), "byte %llu (%s) cannot start a UTF-8 character: the index must be UTF-8 text",
           ull(at(i - 1)), byteText(b).text);
      return n;
    } else {
      nonAscii_ = true;
      if (decode) *out_ += static_cast<char>(b);
    }
  }
  return i;
}

bool IndexParser::escapeByte(uint8_t b, uint64_t offset) {
  if (escape_ == Escape::Hex) {
    const uint32_t digit = isDigit(b)                               ? b - '0'
                           : (b | 0x20) >= 'a' && (b | 0x20) <= 'f' ? (b | 0x20) - 'a' + 10
                                                                    : 16;
    if (digit == 16)
      return fail(offset, "\\u takes 4 hex digits; byte %llu is %s", ull(offset), byteText(b).text);
    hexValue_ = hexValue_ << 4 | digit;
    if (++hexDigits_ < 4) return true;
    escape_ = Escape::None;
    if (role_ != Role::Other) codeUnit(hexValue_, offset);
    return !error_;
  }
  static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
  if (b == 'u') {
    escape_ = Escape::Hex;
    hexDigits_ = 0;
    hexValue_ = 0;
    return true;
  }
  const char* known = b ? std::strchr(from, b) : nullptr;
  if (!known)
    return fail(offset,
                "%s after the '\\' at byte %llu is no JSON escape (they are \\\" \\\\ \\/ \\b "
                "\\f \\n \\r \\t \\uXXXX)",
                byteText(b).text, ull(offset - 1));
  escape_ = Escape::None;
  if (role_ == Role::Other) return true;
  if (highSurrogate_ && !loneSurrogate(offset)) return false;
  *out_ += to[known - from];
  return true;
}

void IndexParser::codeUnit(uint32_t u, uint64_t offset) {
  if (highSurrogate_) {
    if (u >= 0xDC00 && u <= 0xDFFF) {
      u = 0x10000 + ((highSurrogate_ - 0xD800) << 10) + (u - 0xDC00);
      highSurrogate_ = 0;
    } else if (!loneSurrogate(offset)) {
      return;
    }
  }
  if (u >= 0xD800 && u <= 0xDFFF) {
    highSurrogate_ = u;
    if (u >= 0xDC00) loneSurrogate(offset);
    return;
  }
  if (u >= 0x80) nonAscii_ = true;
  appendUtf8(*out_, u);
}

bool IndexParser::loneSurrogate(uint64_t offset) {
  const uint32_t u = highSurrogate_;
  highSurrogate_ = 0;
  if (role_ == Role::Name || role_ == Role::ShardPath) {
    fail(offset,
         "a lone surrogate \\u%04x in the %s at byte %llu: it is no Unicode text, so no "
         "shard's header can hold it",
         u, role_ == Role::Name ? "tensor name" : "shard path", ull(stringAt_));
    if (role_ == Role::ShardPath) error_.tensor = name_;
    return false;
  }
  *out_ += "\xEF\xBF\xBD";  // a top-level key, compared only: U+FFFD will do
  return true;
}

void IndexParser::stringDone(const uint8_t* p, size_t i) {
  if (role_ == Role::TopKey) {
    const bool weightMap = name_ == "weight_map", metadata = name_ == "metadata";
    if ((weightMap && sawWeightMap_) || (metadata && sawMetadata_)) {
      fail(stringAt_,
           "%s appears twice at the top level (again at byte %llu): which one is meant "
           "is unclear",
           quoted(name_).c_str(), ull(stringAt_));
      return;
    }
    sawWeightMap_ |= weightMap;
    sawMetadata_ |= metadata;
    top_ = weightMap ? Top::WeightMap : metadata ? Top::Metadata : Top::Other;
  } else if (role_ == Role::Name) {
    nameAscii_ = !nonAscii_;
  } else if (role_ == Role::ShardPath) {
    addEntry();
    if (error_) return;
  }
  if (key_)
    state_ = State::Colon;
  else
    valueDone(p, i);
}

uint32_t IndexParser::intern() {
  if (lastShard_ != kNone && path(lastShard_) == value_) return lastShard_;
  const size_t mask = shardHash_.size() - 1;
  if ((shards_.size() + 1) * 2 > shardHash_.size()) {
    shardHash_.assign(shardHash_.empty() ? 64 : shardHash_.size() * 2, 0);
    for (uint32_t id = 0; id < shards_.size(); ++id) {
      const std::string_view known = path(id);
      size_t pos = hashBytes(reinterpret_cast<const uint8_t*>(known.data()), known.size());
      while (shardHash_[pos & (shardHash_.size() - 1)]) ++pos;
      shardHash_[pos & (shardHash_.size() - 1)] = id + 1;
    }
    return intern();
  }
  size_t pos = hashBytes(reinterpret_cast<const uint8_t*>(value_.data()), value_.size()) & mask;
  for (; shardHash_[pos]; pos = (pos + 1) & mask)
    if (path(shardHash_[pos] - 1) == value_) return shardHash_[pos] - 1;
  const uint32_t id = static_cast<uint32_t>(shards_.size());
  shardHash_[pos] = id + 1;
  Shard shard = {};
  shard.pathOffset = static_cast<uint32_t>(paths_.size());
  shard.pathLength = static_cast<uint32_t>(value_.size());
  shard.firstAt = stringAt_;
  shard.firstName = store_.size();
  shards_.push_back(shard);
  paths_ += value_;
  if (firstUnsafe_ == kNone && !safeShardPath(value_)) firstUnsafe_ = id;
  return id;
}

void IndexParser::addEntry() {
  if (store_.size() == kMaxNames)
    return void(fail(entryAt_, "more than %u names in weight_map", kMaxNames));
  const uint32_t id = lastShard_ = intern();
  store_.add(name_, id, static_cast<uint32_t>(entryAt_));
  Shard& shard = shards_[id];
  shard.names++;
  shard.bytes += name_.size();
  shard.units += nameAscii_ ? name_.size() : utf16Length(name_);
  allAscii_ &= nameAscii_;
  namesLength_ += name_.size();
}

bool IndexParser::entryError(uint8_t b) {
  // JS checks entries in order once JSON.parse succeeded: a shard path refused earlier in
  // weight_map is its verdict then, which finish() can only give once the text is all read.
  if (firstUnsafe_ != kNone) return skipEntries_ = true;
  fail(entryAt_,
       "the shard of %s is not a string (it starts with %s): weight_map's values are "
       "shard file names",
       quoted(name_).c_str(), byteText(b).text);
  error_.tensor = name_;
  return false;
}

size_t IndexParser::numberBytes(const uint8_t* p, size_t n, size_t i) {
  for (; i < n; ++i) {
    const uint8_t b = p[i];
    const bool digit = isDigit(b), e = b == 'e' || b == 'E';
    switch (num_) {
      case Num::Minus:
        if (!digit) return syntax(at(i), b, "a digit after '-'"), n;
        num_ = b == '0' ? Num::Zero : Num::Int;
        break;
      case Num::Zero:
        if (digit)
          return fail(at(i), "a number with a leading zero at byte %llu: JSON has none",
                      ull(at(i) - 1)),
                 n;
        [[fallthrough]];
      case Num::Int:
      case Num::Frac:
        if (digit) break;
        if (b == '.' && num_ != Num::Frac) {
          num_ = Num::Dot;
          break;
        }
        if (e) {
          num_ = Num::E;
          break;
        }
        valueDone(p, i);
        return i;
      case Num::Dot:
        if (!digit) return syntax(at(i), b, "a digit after '.'"), n;
        num_ = Num::Frac;
        break;
      case Num::E:
        if (b == '+' || b == '-') {
          num_ = Num::ESign;
          break;
        }
        [[fallthrough]];
      case Num::ESign:
        if (!digit) return syntax(at(i), b, "a digit in the exponent"), n;
        num_ = Num::Exp;
        break;
      case Num::Exp:
        if (digit) break;
        valueDone(p, i);
        return i;
    }
  }
  return i;
}

bool IndexParser::finish() {
  if (error_) return false;
  if (finished_) return true;
  if (state_ == State::Rejected) return notAnIndex(0, head_[0], true), false;
  if (state_ == State::Bom || state_ == State::Start)
    return fail(base_, "the index has %llu bytes and no JSON%s", ull(base_),
                base_ ? "" : ": it is empty");
  if (state_ != State::Done) {
    const char* inside = state_ == State::String    ? " inside a string"
                         : state_ == State::Number  ? " inside a number"
                         : state_ == State::Literal ? " inside a literal"
                                                    : "";
    return fail(base_,
                "the index ends at byte %llu%s with %u objects or arrays still open: it "
                "was cut short (an interrupted download?)",
                ull(base_), inside, depth_);
  }
  if (!sawWeightMap_)
    return fail(base_,
                "the index has no \"weight_map\" object among its top-level keys: is it a "
                "sharded checkpoint's *.safetensors.index.json?");
  // In weight_map order, as JS checks: the first unsafe shard path, or the first name given twice.
  NameStore::Repeat repeat;
  const bool unique = store_.seal(repeat);
  if (firstUnsafe_ != kNone && (unique || shards_[firstUnsafe_].firstName <= repeat.second)) {
    fail(shards_[firstUnsafe_].firstAt,
         "shard path %s is not a relative path inside the index's folder (no scheme, no leading "
         "'/', no '.' or '..' segment, no '\\', '?' or '#')",
         quoted(path(firstUnsafe_)).c_str());
    error_.code = ErrorCode::UnsafeShardPath;
    return false;
  }
  if (!unique) {
    const std::string name = store_.nameAt(repeat.first);
    fail(repeat.at,
         "%s is mapped twice in weight_map: entry %u gives %s, entry %u (byte %u) %s; "
         "keep one of them (a bad merge or hand edit?)",
         quoted(name).c_str(), repeat.first + 1, quoted(path(store_.shardAt(repeat.first))).c_str(),
         repeat.second + 1, repeat.at, quoted(path(store_.shardAt(repeat.second))).c_str());
    error_.tensor = name;
    return false;
  }
  if (metadata_ == "null") metadata_.clear();
  std::string().swap(name_);
  std::string().swap(value_);
  std::vector<uint32_t>().swap(shardHash_);

  order_.resize(shards_.size());
  for (uint32_t id = 0; id < order_.size(); ++id) order_[id] = id;
  mergeSort(order_, [this](uint32_t a, uint32_t b) { return utf16Less(path(a), path(b)); });
  rank_.resize(order_.size());
  shardWords_.resize(order_.size() * kShardWords);
  uint32_t first = 0;
  for (uint32_t k = 0; k < order_.size(); ++k) {
    const Shard& shard = shards_[order_[k]];
    rank_[order_[k]] = k;
    uint32_t* words = &shardWords_[k * kShardWords];
    words[kShardPathOffset] = shard.pathOffset;
    words[kShardPathLength] = shard.pathLength;
    words[kShardFirstName] = first;
    words[kShardNameCount] = shard.names;
    words[kShardId] = order_[k];
    first += shard.names;
  }
  finished_ = true;
  return true;
}

int32_t IndexParser::shardOf(std::string_view name) const {
  uint32_t shard;
  if (!finished_ || store_.find(name, shard) < 0) return -1;
  return static_cast<int32_t>(rank_[shard]);
}

void IndexParser::namesInto(uint8_t* blob, uint32_t* ends) const {
  // Where each shard's next name goes, by shard id.
  struct Cursor {
    uint64_t byte, unit;
    uint32_t name;
  };
  std::vector<Cursor> cursors(shards_.size());
  Cursor next = {0, 0, 0};
  for (uint32_t id : order_) {
    cursors[id] = next;
    next.byte += shards_[id].bytes;
    next.unit += shards_[id].units;
    next.name += shards_[id].names;
  }
  NameStore::Reader reader(store_);
  std::string_view name;
  uint32_t shard;
  while (reader.next(name, shard)) {
    Cursor& c = cursors[shard];
    std::memcpy(blob + c.byte, name.data(), name.size());
    c.byte += name.size();
    c.unit += allAscii_ ? name.size() : utf16Length(name);
    ends[c.name++] = static_cast<uint32_t>(c.unit);
  }
}

size_t IndexParser::bytesInUse() const {
  size_t n =
      sizeof(*this) + store_.bytesInUse() + shards_.capacity() * sizeof(Shard) +
      (shardHash_.capacity() + order_.capacity() + rank_.capacity() + shardWords_.capacity()) *
          sizeof(uint32_t) +
      paths_.capacity() + metadata_.capacity() + name_.capacity() + value_.capacity();
  return n;
}

std::string IndexParser::errorText() const { return errorJson(error_); }

uintptr_t IndexParser::tables() {
  const auto address = [](const void* p) { return reinterpret_cast<uintptr_t>(p); };
  tables_[kIndexCount] = count();
  tables_[kIndexShardCount] = shardCount();
  tables_[kIndexShards] = address(shardWords_.data());
  tables_[kIndexPaths] = address(paths_.data());
  tables_[kIndexPathsLength] = paths_.size();
  tables_[kIndexMetadata] = address(metadata_.data());
  tables_[kIndexMetadataLength] = metadata_.size();
  tables_[kIndexNamesLength] = static_cast<uintptr_t>(namesLength_);
  tables_[kIndexBytesInUse] = bytesInUse();
  return address(tables_);
}

}  // namespace st
