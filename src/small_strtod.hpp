// A decimal-to-double reader for the wasm module's strtod (module_libc.cpp). Its one caller in
// the module is nlohmann's lexer, which converts every JSON number with a fraction or exponent;
// the parsers (header_json.cpp, json_tree.cpp) never use the value, and nlohmann itself only
// asks whether it is finite ("number overflow" otherwise). musl's strtod reads with long-double
// arithmetic, which this keeps out of the module (docs/design.md, "Size budget").
#pragma once

namespace st {

// Reads [+-]digits[.digits][(e|E)[+-]digits] at s (no leading space, no inf, nan or hex: the
// lexer hands over validated JSON numbers) and sets *end past it (to s when there is none).
// Whether the result is finite is exact: +-HUGE_VAL exactly when the correctly rounded double
// would overflow. The finite value is within a few units in the last place of it, not
// correctly rounded. errno is not touched.
double parseDouble(const char* s, char** end);

}  // namespace st
