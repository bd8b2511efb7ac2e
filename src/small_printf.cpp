#include "small_printf.hpp"

#include <cstdint>

namespace st {
namespace {

// Appends to a bounded buffer, counting what does not fit.
struct Sink {
  char* out;
  size_t capacity;  // bytes usable before the NUL
  size_t length = 0;
  void put(char c) {
    if (length < capacity) out[length] = c;
    ++length;
  }
  void repeat(char c, int count) {
    for (int i = 0; i < count; ++i) put(c);
  }
};

struct Spec {
  bool left = false, zero = false, plus = false, space = false, alt = false;
  int width = 0;
  int precision = -1;  // none
};

void emit(Sink& sink, const Spec& spec, const char* prefix, const char* body, int bodyLength,
          int zeros) {
  int prefixLength = 0;
  while (prefix[prefixLength]) ++prefixLength;
  const int total = prefixLength + zeros + bodyLength;
  const int pad = spec.width > total ? spec.width - total : 0;
  // '0' pads between the sign and the digits; it is ignored with '-' or a precision.
  const bool zeroPad = spec.zero && !spec.left && spec.precision < 0;
  if (!spec.left && !zeroPad) sink.repeat(' ', pad);
  for (int i = 0; i < prefixLength; ++i) sink.put(prefix[i]);
  if (zeroPad) sink.repeat('0', pad);
  sink.repeat('0', zeros);
  for (int i = 0; i < bodyLength; ++i) sink.put(body[i]);
  if (spec.left) sink.repeat(' ', pad);
}

void integer(Sink& sink, const Spec& spec, uint64_t magnitude, bool negative, unsigned base,
             bool upper, bool isSigned, bool pointer) {
  const char* digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
  char text[24];
  int length = 0;
  // Precision 0 with value 0 prints no digits (but "%#o" still prints its "0").
  if (magnitude != 0 || spec.precision != 0) {
    do {
      text[length++] = digits[magnitude % base];
      magnitude /= base;
    } while (magnitude != 0);
  }
  for (int i = 0, j = length - 1; i < j; ++i, --j) {
    const char t = text[i];
    text[i] = text[j];
    text[j] = t;
  }
  int zeros = spec.precision > length ? spec.precision - length : 0;
  const char* prefix = "";
  if (isSigned) prefix = negative ? "-" : spec.plus ? "+" : spec.space ? " " : "";
  const bool nonZero = length > 0 && !(length == 1 && text[0] == '0');
  if ((spec.alt || pointer) && base == 16 && (nonZero || pointer)) prefix = upper ? "0X" : "0x";
  if (spec.alt && base == 8 && zeros == 0 && (length == 0 || text[0] != '0')) zeros = 1;
  emit(sink, spec, prefix, text, length, zeros);
}

}  // namespace

int formatTo(char* out, size_t n, const char* format, va_list args) {
  Sink sink{out, n > 0 ? n - 1 : 0};
  for (const char* p = format; *p; ++p) {
    if (*p != '%') {
      sink.put(*p);
      continue;
    }
    const char* start = p++;
    Spec spec;
    for (;; ++p) {
      if (*p == '-')
        spec.left = true;
      else if (*p == '0')
        spec.zero = true;
      else if (*p == '+')
        spec.plus = true;
      else if (*p == ' ')
        spec.space = true;
      else if (*p == '#')
        spec.alt = true;
      else
        break;
    }
    if (*p == '*') {
      spec.width = va_arg(args, int);
      if (spec.width < 0) {
        spec.left = true;
        spec.width = -spec.width;
      }
      ++p;
    } else {
      while (*p >= '0' && *p <= '9') spec.width = spec.width * 10 + (*p++ - '0');
    }
    if (*p == '.') {
      ++p;
      spec.precision = 0;
      if (*p == '*') {
        spec.precision = va_arg(args, int);
        if (spec.precision < 0) spec.precision = -1;
        ++p;
      } else {
        while (*p >= '0' && *p <= '9') spec.precision = spec.precision * 10 + (*p++ - '0');
      }
    }
    int size = 0;  // -2 hh, -1 h, 0 int, 1 long, 2 long long / intmax_t, 3 size_t / ptrdiff_t
    if (*p == 'h')
      size = *++p == 'h' ? (++p, -2) : -1;
    else if (*p == 'l')
      size = *++p == 'l' ? (++p, 2) : 1;
    else if (*p == 'j')
      size = (++p, 2);
    else if (*p == 'z' || *p == 't')
      size = (++p, 3);
    const char c = *p;
    if (c == 'd' || c == 'i') {
      int64_t v = size == 2   ? va_arg(args, long long)
                  : size == 1 ? va_arg(args, long)
                  : size == 3 ? static_cast<int64_t>(va_arg(args, ptrdiff_t))
                              : va_arg(args, int);
      if (size == -2) v = static_cast<signed char>(v);
      if (size == -1) v = static_cast<short>(v);
      const uint64_t magnitude = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
      integer(sink, spec, magnitude, v < 0, 10, false, true, false);
    } else if (c == 'u' || c == 'x' || c == 'X' || c == 'o') {
      uint64_t v = size == 2   ? va_arg(args, unsigned long long)
                   : size == 1 ? va_arg(args, unsigned long)
                   : size == 3 ? va_arg(args, size_t)
                               : va_arg(args, unsigned);
      if (size == -2) v = static_cast<unsigned char>(v);
      if (size == -1) v = static_cast<unsigned short>(v);
      integer(sink, spec, v, false, c == 'u' ? 10 : c == 'o' ? 8 : 16, c == 'X', false, false);
    } else if (c == 'p') {
      integer(sink, spec, reinterpret_cast<uintptr_t>(va_arg(args, void*)), false, 16, false, false,
              true);
    } else if (c == 'c') {
      const char ch = static_cast<char>(va_arg(args, int));
      spec.precision = -1;
      emit(sink, spec, "", &ch, 1, 0);
    } else if (c == 's') {
      const char* s = va_arg(args, const char*);
      if (!s) s = "(null)";
      int length = 0;
      while (s[length] && (spec.precision < 0 || length < spec.precision)) ++length;
      spec.precision = -1;
      emit(sink, spec, "", s, length, 0);
    } else if (c == 'e' || c == 'E' || c == 'f' || c == 'F' || c == 'g' || c == 'G' || c == 'a' ||
               c == 'A') {
      // Floating point is outside the subset: its argument is taken (so the ones after it
      // stay in step) and the spec written as it stands.
      static_cast<void>(va_arg(args, double));
      for (const char* q = start; q <= p; ++q) sink.put(*q);
    } else if (c == '%') {
      sink.put('%');
    } else {
      // Not in the subset (%n, %L...): the spec is written as it stands.
      for (const char* q = start; q <= p && *q; ++q) sink.put(*q);
      if (!c) break;
    }
  }
  if (n > 0) out[sink.length < sink.capacity ? sink.length : sink.capacity] = '\0';
  return static_cast<int>(sink.length);
}

}  // namespace st
