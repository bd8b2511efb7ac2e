// libFuzzer target for the slice planner. Byte 0 picks a dtype, byte 1 a rank (0-4), the next
// `rank` bytes the dimensions (0-15), and the rest is a slice spec. The tensor sits after a
// 3-byte one so that its offsets are not the data start. Aborts when a plan breaks its contract.
#include <cstdlib>
#include <string>
#include <vector>

#include "header.hpp"
#include "slice.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const st::Dtype dtype = static_cast<st::Dtype>(data[0] % st::kDtypeCount);
  const size_t rank = data[1] % 5;
  if (size < 2 + rank) return 0;
  std::string shape;
  uint64_t elements = 1;
  for (size_t i = 0; i < rank; ++i) {
    elements *= data[2 + i] % 16;
    shape += (i ? "," : "") + std::to_string(data[2 + i] % 16);
  }
  const uint64_t bytes = elements * st::dtypeBits(dtype) / 8;
  const std::string json =
      R"({"pad":{"dtype":"U8","shape":[3],"data_offsets":[0,3]},"t":{"dtype":")" +
      std::string(st::dtypeName(dtype)) + R"(","shape":[)" + shape + R"(],"data_offsets":[3,)" +
      std::to_string(3 + bytes) + "]}}";
  std::vector<uint8_t> file(8, 0);
  file[0] = static_cast<uint8_t>(json.size());  // < 256
  file.insert(file.end(), json.begin(), json.end());
  st::Header header;
  if (st::parseFile(file.data(), file.size(), file.size() + 3 + bytes, header))
    return 0;  // e.g. an odd number of F4 elements
  const st::TensorInfo& tensor = header.tensors[static_cast<size_t>(header.find("t"))];

  std::vector<st::SliceIndexer> indexers;
  const char* spec = reinterpret_cast<const char*>(data + 2 + rank);
  if (st::parseSliceSpec(std::string_view(spec, size - 2 - rank), indexers)) return 0;
  st::SlicePlan plan;
  if (st::planSlice(header, tensor, indexers.data(), indexers.size(), plan)) return 0;

  uint64_t bits = st::dtypeBits(dtype), sum = 0, previousEnd = 0;
  for (uint64_t d : plan.shape) bits *= d;
  if (plan.shape.size() > rank || bits != plan.byteLength * 8) abort();
  for (const st::ByteRange& r : plan.ranges) {
    if (r.begin >= r.end || r.begin < header.absoluteBegin(tensor) ||
        r.end > header.absoluteBegin(tensor) + bytes || (sum && r.begin <= previousEnd))
      abort();  // empty, outside the tensor, unordered, or adjacent (not merged)
    sum += r.end - r.begin;
    previousEnd = r.end;
  }
  if (sum != plan.byteLength) abort();
  return 0;
}
