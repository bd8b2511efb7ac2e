#include <catch.hpp>
#include <cstdio>
#include <cstring>

#include "header.hpp"
#include "support.hpp"

using namespace st;
using st_test::makeFile;

namespace {
Error parse(const std::vector<uint8_t>& file, Header& h) {
  return parseFile(file.data(), file.size(), file.size(), h);
}
ErrorCode codeOf(const std::string& header, uint64_t dataBytes = 0) {
  Header h;
  return parse(makeFile(header, dataBytes), h).code;
}
}  // namespace

TEST_CASE("a minimal file parses") {
  Header h;
  auto file = makeFile(R"({"a":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]}})", 24);
  Error e = parse(file, h);
  INFO(e.message);
  REQUIRE(!e);
  REQUIRE(h.tensors.size() == 1);
  CHECK(h.name(h.tensors[0]) == "a");
  CHECK(h.tensors[0].rank == 2);
  CHECK(h.shape(h.tensors[0])[1] == 3);
  CHECK(h.find("a") == 0);
  CHECK(h.find("b") == -1);
}

TEST_CASE("unknown dtype is InvalidHeaderDeserialization") {
  CHECK(codeOf(R"({"a":{"dtype":"f32","shape":[],"data_offsets":[0,4]}})", 4) ==
        ErrorCode::InvalidHeaderDeserialization);
}
