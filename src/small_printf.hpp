// The integer and string subset of printf, for the wasm module's snprintf (module_libc.cpp).
// The only printf-family callers linked into the module are nlohmann's lexer ("<U+%.4X>" in a
// syntax error message) and the like; musl's full printf would bring its floating-point
// formatting and long-double arithmetic into the module (docs/design.md, "Size budget").
#pragma once
#include <cstdarg>
#include <cstddef>

namespace st {

// vsnprintf over: flags - 0 + space #, width and precision (digits or *), length hh h l ll z j t,
// conversions d i u x X o c s p %. Anything else is written as it stands (a floating-point
// conversion's argument is consumed). Writes at most n
// bytes including the terminating NUL (none when n is 0); returns the length the whole output
// would have, as vsnprintf does.
int formatTo(char* out, size_t n, const char* format, va_list args);

}  // namespace st
