// The core's own number formatting, checked against the C and C++ libraries': small_printf.hpp
// (the wasm module's snprintf) on the subset it implements and on truncation, and decimal()
// (error.hpp, the numbers in messages).
#include <catch.hpp>

#include <climits>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <string>

#include "error.hpp"
#include "small_printf.hpp"

namespace {

std::string ours(size_t n, const char* format, ...) {
  std::string out(n + 8, '#');
  va_list args;
  va_start(args, format);
  const int length = st::formatTo(out.data(), n, format, args);
  va_end(args);
  return std::to_string(length) + ":" + out;
}

// The formats are literals at every call site (SAME below), passed through to the C library.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-security"
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
template <class... Args>
std::string libc(size_t n, const char* format, Args... args) {
  std::string out(n + 8, '#');
  const int length = std::snprintf(out.data(), n, format, args...);
  return std::to_string(length) + ":" + out;
}
#pragma GCC diagnostic pop

#define SAME(n, ...) REQUIRE(ours(n, __VA_ARGS__) == libc(n, __VA_ARGS__))

}  // namespace

TEST_CASE("formatTo matches snprintf on integers, strings, characters") {
  const int ints[] = {0, 1, -1, 7, 42, -42, 255, 65535, INT_MAX, INT_MIN};
  const char* intFormats[] = {"%d",   "%i",       "%5d",     "%-5d|", "%05d", "%+d", "% d",
                              "%.3d", "%8.3d",    "%-8.3d|", "%.0d",  "%x",   "%X",  "%#x",
                              "%#X",  "%08x",     "%.4X",    "%#.4x", "%o",   "%#o", "%#.0o",
                              "%u",   "<U+%.4X>", "%*d",     "%-*d|"};
  for (const char* f : intFormats)
    for (int v : ints) {
      INFO(f << " " << v);
      if (std::string(f).find('*') != std::string::npos) {
        SAME(64, f, 6, v);
        SAME(64, f, -6, v);
      } else {
        SAME(64, f, v);
      }
    }
  SAME(64, "%.2hhX %hhd %hd %hu", 0x1ff, 0x80, 70000, 70000);
  SAME(64, "%ld %lu %lld %llu %llx", -5L, 5UL, LLONG_MIN, ULLONG_MAX, 0x123456789abcdefULL);
  SAME(64, "%zu %zd %jd %td", size_t{123}, static_cast<ptrdiff_t>(-9), static_cast<intmax_t>(-77),
       static_cast<ptrdiff_t>(5));
  SAME(64, "[%s] [%8s] [%-8s] [%.2s] [%c] [%3c] [%%]", "abc", "abc", "abc", "abc", 'z', 'y');
  SAME(64, "plain text, no conversions");
}

TEST_CASE("formatTo truncates as snprintf does and returns the full length") {
  for (size_t n : {0u, 1u, 2u, 5u, 8u, 9u, 10u}) SAME(n, "<U+%.4X>", 0x1f);
  SAME(4, "%s and %d", "long string", 12345);
}

TEST_CASE("formatTo writes a floating-point spec as it stands and keeps later arguments in step") {
  std::string out(64, '#');
  auto call = [&out](const char* format, ...) {
    va_list args;
    va_start(args, format);
    const int length = st::formatTo(out.data(), out.size(), format, args);
    va_end(args);
    return std::string(out.data(), static_cast<size_t>(length));
  };
  REQUIRE(call("%d %.3f %d", 1, 2.5, 3) == "1 %.3f 3");
}

TEST_CASE("decimal matches std::to_string") {
  for (int64_t v : {INT64_MIN, INT64_MIN + 1, int64_t{-100}, int64_t{-1}, int64_t{0}, int64_t{9},
                    int64_t{10}, INT64_MAX})
    REQUIRE(st::decimal(v) == std::to_string(v));
  for (uint64_t v : {uint64_t{0}, uint64_t{1}, uint64_t{1} << 53, UINT64_MAX})
    REQUIRE(st::decimal(v) == std::to_string(v));
  REQUIRE(st::decimal(-7) == "-7");  // int
  REQUIRE(st::decimal(uint8_t{200}) == "200");
}
