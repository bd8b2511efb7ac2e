// libFuzzer target for the sharded index parser: byte 0 seeds where the rest, the index, is cut
// into chunks (0 to 17 bytes). Fed whole and in those chunks it must give the same verdict (code,
// offset, message) and, when valid, the same tables; every name listed must be found by shardOf
// in the shard whose range holds it. Aborts otherwise.
#include <cstdlib>
#include <string>
#include <vector>

#include "index_map.hpp"

namespace {

bool parse(st::IndexParser& p, const uint8_t* data, size_t size, uint32_t seed) {
  if (!seed) return p.feed(data, size) && p.finish();
  for (size_t at = 0; at < size;) {
    seed = seed * 1103515245u + 12345u;
    const size_t n = (seed >> 16) % 18 < size - at ? (seed >> 16) % 18 : size - at;
    if (!p.feed(data + at, n)) return false;
    at += n;
  }
  return p.finish();
}

std::string names(const st::IndexParser& p, std::vector<uint32_t>& ends) {
  std::string blob(p.namesLength(), '\0');
  ends.assign(p.count(), 0);
  p.namesInto(reinterpret_cast<uint8_t*>(&blob[0]), ends.data());
  return blob;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const uint32_t seed = data[0] * 2654435761u | 1;
  st::IndexParser whole, pieces;
  const bool ok = parse(whole, data + 1, size - 1, 0);
  if (ok != parse(pieces, data + 1, size - 1, seed)) abort();
  const st::Error &a = whole.error(), &b = pieces.error();
  if (a.code != b.code || a.offset != b.offset || a.message != b.message || a.tensor != b.tensor)
    abort();
  if (!ok) return 0;
  if (whole.count() != pieces.count() || whole.shardCount() != pieces.shardCount() ||
      whole.metadata() != pieces.metadata())
    abort();
  for (uint32_t i = 0; i < whole.shardCount(); ++i)
    if (whole.shardPath(i) != pieces.shardPath(i)) abort();
  std::vector<uint32_t> ends, otherEnds;
  const std::string blob = names(whole, ends);
  if (blob != names(pieces, otherEnds) || ends != otherEnds) abort();
  // Each name: its UTF-16 end to a byte end, then its shard by the shards' ranges.
  const auto* words = reinterpret_cast<const uintptr_t*>(whole.tables());
  const auto* shards = reinterpret_cast<const uint32_t*>(words[st::kIndexShards]);
  size_t byte = 0, unit = 0, shard = 0;
  for (uint32_t k = 0; k < ends.size(); ++k) {
    const size_t start = byte;
    while (unit < ends[k]) {
      const uint8_t c = static_cast<uint8_t>(blob[byte]);
      byte += c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
      unit += c >= 0xF0 ? 2 : 1;
    }
    while (shard < whole.shardCount() &&
           k >= shards[shard * st::kShardWords + st::kShardFirstName] +
                    shards[shard * st::kShardWords + st::kShardNameCount])
      ++shard;
    if (unit != ends[k] || whole.shardOf(std::string_view(blob).substr(start, byte - start)) !=
                               static_cast<int32_t>(shard))
      abort();
  }
  if (byte != blob.size()) abort();
  return 0;
}
