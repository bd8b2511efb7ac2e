// Linked into the wasm module only (never into native builds, where they would replace the C
// library's): smaller stand-ins for the C library functions the module's code calls.
// - snprintf and vsnprintf over the integer subset in small_printf.hpp, so that musl's full
//   printf, its float formatting and its long-double arithmetic stay out of the module.
// - strtod over small_strtod.hpp, so that musl's long-double decimal reader stays out; strtof
//   and strtold too (nothing in the module calls them), or the std::stof family in libc++ pulls
//   musl's strtod object in beside this one.
#include <cstdarg>
#include <cstddef>

#include "small_printf.hpp"
#include "small_strtod.hpp"

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

extern "C" double strtod(const char* s, char** end) { return st::parseDouble(s, end); }
extern "C" float strtof(const char* s, char** end) {
  return static_cast<float>(st::parseDouble(s, end));
}
extern "C" long double strtold(const char* s, char** end) { return st::parseDouble(s, end); }
