// Linked into the wasm module only (never into native builds, where it would replace the C
// library's): snprintf and vsnprintf over the integer subset in small_printf.hpp, so that musl's
// full printf, its float formatting and its long-double arithmetic stay out of the module.
#include <cstdarg>
#include <cstddef>

#include "small_printf.hpp"

extern "C" int vsnprintf(char* out, size_t n, const char* format, va_list args) {
  return st::formatTo(out, n, format, args);
}

extern "C" int snprintf(char* out, size_t n, const char* format, ...) {
  va_list args;
  va_start(args, format);
  const int length = st::formatTo(out, n, format, args);
  va_end(args);
  return length;
}
