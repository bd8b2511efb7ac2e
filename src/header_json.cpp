#include "header_json.hpp"

#include <algorithm>
#include <cstring>
#include <set>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "json_text.hpp"

namespace st {
namespace {

enum class Field : uint8_t { None, Dtype, Shape, Offsets, Unknown };

// What the next JSON event is expected to be.
enum class State : uint8_t {
  Start,           // the top-level object
  TopKey,          // a tensor name or __metadata__, or the end of the top object
  MetadataValue,   // the value of __metadata__: an object or null
  MetadataKey,     // a metadata key or the end of the metadata object
  MetadataString,  // a metadata value: a string
  EntryValue,      // the value of a tensor name: an object, or [dtype, shape, offsets]
  EntryKey,        // a field name or the end of the entry object
  EntrySeq,        // the next element of an array-form entry
  FieldValue,      // the value of `field`
  DtypeMapKey,     // {"F32": null}: serde also reads a unit enum variant from a one-key map
  DtypeMapNull,
  DtypeMapEnd,
  ShapeDim,     // a dimension or the end of the shape array
  OffsetValue,  // an offset or the end of the data_offsets array
  Skip,         // inside the value of an unknown field
  Done,
};

class HeaderHandler final {
 public:
  HeaderHandler(Header& out, const char* begin, const char* const* head, uint64_t baseOffset)
      : out_(out), begin_(begin), head_(head), baseOffset_(baseOffset) {}

  Error error;

  bool null() { return scalar(Kind::Null); }
  bool boolean(bool) { return scalar(Kind::Other); }
  bool number_integer(int64_t) {
    return atNumber([&] { return scalar(Kind::Negative); });
  }
  bool number_float(double, const std::string&) {
    return atNumber([&] { return scalar(Kind::Float); });
  }
  bool binary(std::vector<uint8_t>&) { return scalar(Kind::Other); }

  bool number_unsigned(uint64_t value) {
    return atNumber([&] { return unsignedValue(value); });
  }

  bool unsignedValue(uint64_t value) {
    switch (state_) {
      case State::ShapeDim:
        out_.dims.push_back(value);
        ++current_.rank;
        return true;
      case State::OffsetValue:
        if (offsetCount_ == 2) return fail("data_offsets has more than 2 elements");
        (offsetCount_ == 0 ? current_.begin : current_.end) = value;
        ++offsetCount_;
        return true;
      default: return scalar(Kind::Unsigned);
    }
  }

  bool string(std::string& value) {
    switch (state_) {
      case State::MetadataString:
        current_meta_.value = append(value);
        out_.metadata.push_back(current_meta_);
        state_ = State::MetadataKey;
        return true;
      case State::FieldValue:
        if (field_ == Field::Dtype) {
          if (!parseDtype(value.data(), value.size(), current_.dtype))
            return fail("unknown dtype \"" + value + "\"");
          return fieldDone();
        }
        return scalar(Kind::String);
      case State::EntrySeq:
        if (seqIndex_ != 0) return scalar(Kind::String);
        field_ = Field::Dtype;
        if (!parseDtype(value.data(), value.size(), current_.dtype))
          return fail("unknown dtype \"" + value + "\"");
        return fieldDone();
      default: return scalar(Kind::String);
    }
  }

  bool key(std::string& k) {
    switch (state_) {
      case State::TopKey:
        if (k == "__metadata__") {
          if (sawMetadata_) return fail("duplicate key \"__metadata__\"");
          sawMetadata_ = true;
          state_ = State::MetadataValue;
        } else {
          current_ = TensorInfo{};
          current_.name = append(k);
          current_.dimsOffset = static_cast<uint32_t>(out_.dims.size());
          state_ = State::EntryValue;
        }
        return true;
      case State::MetadataKey:
        current_meta_.key = append(k);
        state_ = State::MetadataString;
        return true;
      case State::EntryKey: {
        Field f = k == "dtype"          ? Field::Dtype
                  : k == "shape"        ? Field::Shape
                  : k == "data_offsets" ? Field::Offsets
                                        : Field::Unknown;
        if (f == Field::Unknown) {
          if (!unknownKeys_.insert(k).second)
            return fail("duplicate field \"" + k + "\" in tensor " + quotedName());
        } else {
          unsigned bit = 1u << static_cast<unsigned>(f);
          if (fieldsSeen_ & bit)
            return fail("duplicate field \"" + k + "\" in tensor " + quotedName());
          fieldsSeen_ |= bit;
        }
        field_ = f;
        state_ = State::FieldValue;
        return true;
      }
      case State::DtypeMapKey:
        if (!parseDtype(k.data(), k.size(), current_.dtype))
          return fail("unknown dtype \"" + k + "\"");
        state_ = State::DtypeMapNull;
        return true;
      case State::Skip: return true;
      default: return fail("unexpected key");
    }
  }

  bool start_object(std::size_t) {
    if (++depth_ > kMaxJsonDepth) return fail("JSON nesting deeper than " + decimal(kMaxJsonDepth));
    switch (state_) {
      case State::Start: state_ = State::TopKey; return true;
      case State::MetadataValue:
        out_.hasMetadata = true;
        state_ = State::MetadataKey;
        return true;
      case State::EntryValue: beginEntry(State::EntryKey); return true;
      case State::FieldValue:
        if (field_ == Field::Dtype) {
          state_ = State::DtypeMapKey;
          return true;
        }
        return startSkipOrFail("an object");
      case State::EntrySeq:
        if (seqIndex_ == 0) {
          field_ = Field::Dtype;
          state_ = State::DtypeMapKey;
          return true;
        }
        return fail("tensor " + quotedName() + " has an object where an array was expected");
      case State::Skip: return true;
      default: return scalar(Kind::Object);
    }
  }

  bool end_object() {
    --depth_;
    switch (state_) {
      case State::TopKey: state_ = State::Done; return true;
      case State::MetadataKey: state_ = State::TopKey; return true;
      case State::EntryKey: return finishEntry();
      case State::DtypeMapKey: return fail("dtype object of tensor " + quotedName() + " is empty");
      case State::DtypeMapEnd: return fieldDone();
      case State::Skip: return leaveSkip();
      default: return fail("unexpected end of object");
    }
  }

  bool start_array(std::size_t) {
    if (++depth_ > kMaxJsonDepth) return fail("JSON nesting deeper than " + decimal(kMaxJsonDepth));
    switch (state_) {
      case State::EntryValue: beginEntry(State::EntrySeq); return true;
      case State::FieldValue:
        if (field_ == Field::Shape) {
          state_ = State::ShapeDim;
          return true;
        }
        if (field_ == Field::Offsets) {
          offsetCount_ = 0;
          state_ = State::OffsetValue;
          return true;
        }
        return startSkipOrFail("an array");
      case State::EntrySeq:
        if (seqIndex_ == 1) {
          field_ = Field::Shape;
          state_ = State::ShapeDim;
          return true;
        }
        if (seqIndex_ == 2) {
          field_ = Field::Offsets;
          offsetCount_ = 0;
          state_ = State::OffsetValue;
          return true;
        }
        return fail("tensor " + quotedName() + " has an array where " +
                    (seqIndex_ == 0 ? "a dtype" : "no further element") + " was expected");
      case State::Skip: return true;
      default: return scalar(Kind::Array);
    }
  }

  bool end_array() {
    --depth_;
    switch (state_) {
      case State::ShapeDim: return fieldDone();
      case State::OffsetValue:
        if (offsetCount_ != 2)
          return fail("data_offsets of tensor " + quotedName() + " has " + decimal(offsetCount_) +
                      " elements, not 2");
        return fieldDone();
      case State::EntrySeq:
        if (seqIndex_ != 3)
          return fail("tensor " + quotedName() + " is an array of " + decimal(seqIndex_) +
                      " elements, not [dtype, shape, data_offsets]");
        return finishEntry();
      case State::Skip: return leaveSkip();
      default: return fail("unexpected end of array");
    }
  }

  bool parse_error(std::size_t position, const std::string&,
                   const nlohmann::detail::exception& ex) {
    // position counts the characters the lexer read, and reading the end of input counts as
    // one: clamp to the bytes actually read so the offset never points past the header.
    uint64_t read = static_cast<uint64_t>(*head_ - begin_);
    if (!error)
      error = makeError(ErrorCode::InvalidHeaderDeserialization,
                        baseOffset_ + std::min<uint64_t>(position, read),
                        std::string("header is not valid JSON: ") + ex.what());
    return false;
  }

  bool finished() const { return state_ == State::Done; }

 private:
  enum class Kind : uint8_t { Null, Unsigned, Negative, Float, String, Other, Object, Array };

  static const char* kindName(Kind kind) {
    switch (kind) {
      case Kind::Null: return "null";
      case Kind::Unsigned: return "an integer";
      case Kind::Negative: return "a negative integer";
      case Kind::Float: return "a non-integer number";
      case Kind::String: return "a string";
      case Kind::Object: return "an object";
      case Kind::Array: return "an array";
      case Kind::Other: break;
    }
    return "a boolean";
  }

  // A scalar value (or a container in a place where only a scalar may stand).
  bool scalar(Kind kind) {
    switch (state_) {
      case State::Skip: return true;
      case State::MetadataValue:
        if (kind == Kind::Null) {
          state_ = State::TopKey;
          return true;
        }
        return fail(std::string("__metadata__ is ") + kindName(kind) + ", not an object or null");
      case State::MetadataString:
        return fail("metadata value of \"" + std::string(out_.str(current_meta_.key)) + "\" is " +
                    kindName(kind) + ", not a string");
      case State::FieldValue:
        if (field_ == Field::Unknown) return fieldDone();
        return fail(std::string(fieldName(field_)) + " of tensor " + quotedName() + " is " +
                    kindName(kind) + ", not " + fieldExpected(field_));
      case State::DtypeMapNull:
        if (kind == Kind::Null) {
          state_ = State::DtypeMapEnd;
          return true;
        }
        return fail("dtype object of tensor " + quotedName() + " must map the dtype to null");
      case State::EntrySeq:
        return fail("tensor " + quotedName() + " has " + kindName(kind) + " at position " +
                    decimal(seqIndex_) + " of its array form");
      case State::ShapeDim:
        return fail("shape of tensor " + quotedName() + " contains " + kindName(kind) +
                    ", not a non-negative integer");
      case State::OffsetValue:
        return fail("data_offsets of tensor " + quotedName() + " contains " + kindName(kind) +
                    ", not a non-negative integer");
      case State::EntryValue:
        return fail("tensor " + quotedName() + " is " + kindName(kind) + ", not an object");
      case State::Start:
        return fail(std::string("header is ") + kindName(kind) + ", not a JSON object");
      default: return fail(std::string("unexpected ") + kindName(kind));
    }
  }

  static const char* fieldName(Field f) {
    switch (f) {
      case Field::Dtype: return "dtype";
      case Field::Shape: return "shape";
      case Field::Offsets: return "data_offsets";
      default: return "field";
    }
  }
  static const char* fieldExpected(Field f) {
    return f == Field::Dtype ? "a dtype string" : "an array of non-negative integers";
  }

  void beginEntry(State next) {
    fieldsSeen_ = 0;
    seqIndex_ = 0;
    unknownKeys_.clear();
    seq_ = next == State::EntrySeq;
    state_ = next;
  }

  bool fieldDone() {
    if (seq_) {
      ++seqIndex_;
      state_ = State::EntrySeq;
    } else {
      state_ = State::EntryKey;
    }
    return true;
  }

  bool startSkipOrFail(const char* what) {
    if (field_ != Field::Unknown)
      return fail(std::string(fieldName(field_)) + " of tensor " + quotedName() + " is " + what +
                  ", not " + fieldExpected(field_));
    skipBase_ = depth_ - 1;
    state_ = State::Skip;
    return true;
  }

  bool leaveSkip() {
    if (depth_ == skipBase_) return fieldDone();
    return true;
  }

  bool finishEntry() {
    if (!seq_) {
      for (Field f : {Field::Dtype, Field::Shape, Field::Offsets})
        if (!(fieldsSeen_ & (1u << static_cast<unsigned>(f))))
          return fail(std::string("tensor ") + quotedName() + " has no \"" + fieldName(f) +
                      "\" field");
    }
    out_.tensors.push_back(current_);
    state_ = State::TopKey;
    return true;
  }

  StringRef append(const std::string& s) {
    StringRef ref{static_cast<uint32_t>(out_.strings.size()), static_cast<uint32_t>(s.size())};
    out_.strings.append(s);
    return ref;
  }

  std::string quotedName() const { return "\"" + std::string(out_.str(current_.name)) + "\""; }

  // Runs a number's callback with errors placed just past the number, as they are past any other
  // token: the lexer has read one character more to see where the number ends, except at the end
  // of the input. A JSON number ends in a digit, and what follows it is never one.
  template <class Callback>
  bool atNumber(Callback callback) {
    const char* head = *head_;
    numberEnd_ = head > begin_ && (head[-1] < '0' || head[-1] > '9') ? head - 1 : head;
    const bool ok = callback();
    numberEnd_ = nullptr;
    return ok;
  }

  bool fail(std::string message) {
    if (!error) {
      const char* at = numberEnd_ ? numberEnd_ : *head_;
      error = makeError(ErrorCode::InvalidHeaderDeserialization,
                        baseOffset_ + static_cast<uint64_t>(at - begin_), std::move(message));
      if (state_ != State::TopKey && state_ != State::Start && state_ != State::MetadataKey &&
          state_ != State::MetadataString && state_ != State::MetadataValue)
        error.tensor = std::string(out_.str(current_.name));
    }
    return false;
  }

  Header& out_;
  const char* begin_;
  const char* const* head_;
  const char* numberEnd_ = nullptr;  // while a number's callback runs: just past the number
  uint64_t baseOffset_;
  State state_ = State::Start;
  Field field_ = Field::None;
  int depth_ = 0;
  int skipBase_ = 0;
  unsigned fieldsSeen_ = 0;
  int seqIndex_ = 0;
  bool seq_ = false;
  unsigned offsetCount_ = 0;
  bool sawMetadata_ = false;
  TensorInfo current_;
  MetadataEntry current_meta_;
  // A set, not a list: a header can hold millions of unknown fields in one entry.
  std::set<std::string> unknownKeys_;
};

}  // namespace

Error parseHeaderJson(const char* begin, const char* end, uint64_t baseOffset, Header& out) {
  // nlohmann skips a UTF-8 byte order mark at the start; serde_json (the reference) does not.
  if (end - begin >= 3 && std::memcmp(begin, "\xEF\xBB\xBF", 3) == 0)
    return makeError(ErrorCode::InvalidHeaderDeserialization, baseOffset,
                     "header starts with a byte order mark, which JSON does not allow");
  const char* head = begin;
  HeaderHandler handler(out, begin, &head, baseOffset);
  bool ok = nlohmann::json::sax_parse(TrackedIterator{begin, &head}, TrackedIterator{end, &head},
                                      &handler, nlohmann::json::input_format_t::json, true, false);
  if (handler.error) return std::move(handler.error);
  if (!ok || !handler.finished())
    return makeError(ErrorCode::InvalidHeaderDeserialization, baseOffset + (head - begin),
                     "header is not a complete JSON object");
  // nlohmann's lexer takes a NUL byte for the end of input, so `{}\0junk` parses. A raw NUL
  // can stand nowhere in JSON text; once the object parsed, one can only follow it.
  if (const void* nul = std::memchr(begin, 0, static_cast<size_t>(end - begin)))
    return makeError(ErrorCode::InvalidHeaderDeserialization,
                     baseOffset + (static_cast<const char*>(nul) - begin),
                     "header has a NUL byte after the JSON object");
  return {};
}

}  // namespace st
