// The JS-facing surface (api.hpp): what crosses into js/errors.js must be JSON that
// JSON.parse reads back to the same fields.
#include <catch.hpp>

#include "api.hpp"

TEST_CASE("errorJson carries code, tensor, message and offset as one JSON object", "[api]") {
  const st::Error e = st::makeError(st::ErrorCode::InvalidOffset, 9007199254740993ull,
                                    "offsets \"0\" \\ 4\n", "w\x01\"");
  CHECK(st::errorJson(e) ==
        "{\"code\":\"InvalidOffset\",\"tensor\":\"w\\u0001\\\"\",\"message\":\"offsets \\\"0\\\" \\\\ 4\\n\","
        "\"offset\":9007199254740993}");
}

TEST_CASE("errorJson of no error says Ok", "[api]") {
  CHECK(st::errorJson(st::Error{}) == "{\"code\":\"Ok\",\"tensor\":\"\",\"message\":\"\",\"offset\":0}");
}

TEST_CASE("a ParsedFile's error is the JSON of what went wrong", "[api]") {
  st::ParsedFile parsed;
  const unsigned char prefix[8] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
  CHECK(parsed.readHeaderLength(reinterpret_cast<uintptr_t>(prefix), 8, 100) == -1);
  CHECK(parsed.error().rfind("{\"code\":\"HeaderTooLarge\",", 0) == 0);
}
