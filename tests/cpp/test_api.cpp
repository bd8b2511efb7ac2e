// The JS-facing surface (api.hpp): the error JSON that js/errors.js parses, and the words
// through which js/table.js finds the parsed header.
#include <catch.hpp>

#include <string>
#include <vector>

#include "api.hpp"

TEST_CASE("errorJson carries code, tensor, message and offset as one JSON object", "[api]") {
  const st::Error e = st::makeError(st::ErrorCode::InvalidOffset, 9007199254740993ull,
                                    "offsets \"0\" \\ 4\n", "w\x01\"");
  CHECK(st::errorJson(e) ==
        "{\"code\":\"InvalidOffset\",\"tensor\":\"w\\u0001\\\"\",\"message\":\"offsets \\\"0\\\" "
        "\\\\ 4\\n\","
        "\"offset\":9007199254740993}");
}

TEST_CASE("errorJson of no error says Ok", "[api]") {
  CHECK(st::errorJson(st::Error{}) ==
        "{\"code\":\"Ok\",\"tensor\":\"\",\"message\":\"\",\"offset\":0}");
}

TEST_CASE("a ParsedFile's error is the JSON of what went wrong", "[api]") {
  st::ParsedFile parsed;
  const unsigned char prefix[8] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
  CHECK(parsed.readHeaderLength(reinterpret_cast<uintptr_t>(prefix), 8, 100) == -1);
  CHECK(parsed.error().rfind("{\"code\":\"HeaderTooLarge\",", 0) == 0);
}

TEST_CASE("ParsedFile::tables says where each part of the parsed header is", "[api]") {
  const std::string json =
      R"({"__metadata__":{"k":"v"},"b":{"dtype":"U8","shape":[2,1],"data_offsets":[0,2]}})";
  std::vector<unsigned char> bytes(json.begin(), json.end());
  st::ParsedFile parsed;
  REQUIRE(parsed.parse(reinterpret_cast<uintptr_t>(bytes.data()), uint32_t(bytes.size()),
                       double(8 + bytes.size() + 2)));
  const uintptr_t* words = reinterpret_cast<const uintptr_t*>(parsed.tables());
  CHECK(words[1] == 1);  // one tensor
  const auto* tensor = reinterpret_cast<const st::TensorInfo*>(words[0]);
  const char* strings = reinterpret_cast<const char*>(words[2]);
  CHECK(std::string(strings + tensor->name.offset, tensor->name.length) == "b");
  CHECK(tensor->rank == 2);
  const auto* dims = reinterpret_cast<const uint64_t*>(words[4]);
  CHECK(dims[tensor->dimsOffset] == 2);
  CHECK(dims[tensor->dimsOffset + 1] == 1);
  CHECK(words[5] == 1);  // has __metadata__
  CHECK(words[7] == 1);  // one entry
  const uint32_t* entry = reinterpret_cast<const uint32_t*>(words[6]);
  CHECK(std::string(strings + entry[0], entry[1]) == "k");
  CHECK(std::string(strings + entry[2], entry[3]) == "v");
  CHECK(words[3] >= 3);  // "b", "k", "v" at least
  // byName: the tensors' positions sorted by name, here the one tensor's
  CHECK(reinterpret_cast<const uint32_t*>(words[8])[0] == 0);
}
