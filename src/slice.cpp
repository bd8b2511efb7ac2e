#include "slice.hpp"

#include <string>

namespace st {
namespace {

bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool isDigit(char c) { return c >= '0' && c <= '9'; }

struct SpecParser {
  std::string_view spec;
  size_t pos = 0;

  void skipSpace() {
    while (pos < spec.size() && isSpace(spec[pos])) ++pos;
  }
  bool at(char c) const { return pos < spec.size() && spec[pos] == c; }
  bool atNumber() const { return at('-') || (pos < spec.size() && isDigit(spec[pos])); }

  Error fail(const std::string& what, size_t where) const {
    std::string found = "the end";
    if (where < spec.size()) {
      unsigned char c = static_cast<unsigned char>(spec[where]);
      found =
          c >= 0x20 && c < 0x7F ? "'" + std::string(1, spec[where]) + "'" : "byte " + decimal(c);
    }
    return makeError(ErrorCode::InvalidSlice, 0,
                     "slice spec \"" + std::string(spec) + "\": " + what + ", found " + found +
                         " at position " + decimal(where));
  }

  Error number(int64_t& out) {
    const size_t begin = pos;
    const bool negative = at('-');
    if (negative) ++pos;
    if (pos == spec.size() || !isDigit(spec[pos])) return fail("expected digits after '-'", pos);
    const uint64_t limit = negative ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
    uint64_t magnitude = 0;
    for (; pos < spec.size() && isDigit(spec[pos]); ++pos) {
      unsigned digit = static_cast<unsigned>(spec[pos] - '0');
      if (magnitude > (limit - digit) / 10)
        return fail("the number does not fit in a signed 64-bit integer", begin);
      magnitude = magnitude * 10 + digit;
    }
    // Negated as -(m - 1) - 1 so that -2^63 never passes through +2^63.
    out = negative && magnitude != 0 ? -static_cast<int64_t>(magnitude - 1) - 1
                                     : static_cast<int64_t>(magnitude);
    return {};
  }

  Error indexer(SliceIndexer& ix) {
    if (atNumber()) {
      if (Error e = number(ix.start)) return e;
      ix.hasStart = true;
      skipSpace();
    }
    if (!at(':')) {
      if (!ix.hasStart) return fail("expected an integer or ':'", pos);
      ix.kind = SliceIndexer::Kind::Index;
      return {};
    }
    ++pos;
    skipSpace();
    if (atNumber()) {
      if (Error e = number(ix.stop)) return e;
      ix.hasStop = true;
      skipSpace();
    }
    if (at(':')) return fail("steps are not supported", pos);
    return {};
  }

  Error list(std::vector<SliceIndexer>& out) {
    skipSpace();
    if (pos == spec.size()) return {};
    for (;;) {
      SliceIndexer ix;
      if (Error e = indexer(ix)) return e;
      out.push_back(ix);
      if (pos == spec.size()) return {};
      if (!at(',')) return fail("expected ',' or the end of the spec", pos);
      ++pos;
      skipSpace();
    }
  }
};

std::string indexerText(const SliceIndexer& ix) {
  if (ix.kind == SliceIndexer::Kind::Index) return "index " + decimal(ix.start);
  return "range " + (ix.hasStart ? decimal(ix.start) : std::string()) + ":" +
         (ix.hasStop ? decimal(ix.stop) : std::string());
}

// Python-style bound: negative values count back from dim. False when the result would lie
// outside [0, dim]; nothing is clamped.
bool resolve(int64_t value, uint64_t dim, uint64_t& out) {
  if (value >= 0) {
    out = static_cast<uint64_t>(value);
    return out <= dim;
  }
  const uint64_t back = uint64_t{0} - static_cast<uint64_t>(value);  // |value|, even for -2^63
  if (back > dim) return false;
  out = dim - back;
  return true;
}

// One dimension of the slice, resolved to elements [begin, begin + count).
struct DimSlice {
  uint64_t begin;
  uint64_t count;
  uint64_t strideBits;  // distance between consecutive indices of this dimension
};

// An outer dimension the plan iterates over: the ranges repeat `count` times, `stride` apart.
struct Loop {
  uint64_t stride;  // bytes
  uint64_t count;
  uint64_t index;
};

}  // namespace

Error parseSliceSpec(std::string_view spec, std::vector<SliceIndexer>& out) {
  out.clear();
  SpecParser parser{spec};
  Error e = parser.list(out);
  if (e) out.clear();
  return e;
}

Error planSlice(const Header& header, const TensorInfo& tensor, const SliceIndexer* indexers,
                size_t count, SlicePlan& out) {
  out.shape.clear();
  out.ranges.clear();
  out.byteLength = 0;
  const uint32_t rank = tensor.rank;
  const uint64_t* dims = header.shape(tensor);
  const uint64_t tensorStart = header.absoluteBegin(tensor);
  auto fail = [&](ErrorCode code, uint64_t offset, const std::string& why) {
    std::string name(header.name(tensor));
    return makeError(code, offset,
                     "tensor \"" + name + "\" " + dtypeName(tensor.dtype) + " " +
                         shapeText(header.shape(tensor), tensor.rank) + ": " + why,
                     name);
  };
  if (count > rank)
    return fail(ErrorCode::TooManySlices, tensorStart,
                decimal(count) + " indexers for " + decimal(rank) + " dimensions");

  std::vector<DimSlice> slices(rank);
  out.shape.reserve(rank);
  bool empty = false;
  for (uint32_t d = 0; d < rank; ++d) {
    const uint64_t dim = dims[d];
    uint64_t begin = 0, end = dim;
    if (d < count) {
      const SliceIndexer& ix = indexers[d];
      auto where = [d, dim] {  // built only on failure
        return " of dimension " + decimal(d) + " (size " + decimal(dim) + ")";
      };
      if (ix.kind == SliceIndexer::Kind::Index) {
        if (!resolve(ix.start, dim, begin) || begin == dim)
          return fail(ErrorCode::SliceOutOfRange, tensorStart,
                      indexerText(ix) + " is outside" + where());
        end = begin + 1;
      } else {
        if (ix.hasStart && !resolve(ix.start, dim, begin))
          return fail(ErrorCode::SliceOutOfRange, tensorStart,
                      indexerText(ix) + ": start " + decimal(ix.start) + " is outside" + where());
        if (ix.hasStop && !resolve(ix.stop, dim, end))
          return fail(ErrorCode::SliceOutOfRange, tensorStart,
                      indexerText(ix) + ": stop " + decimal(ix.stop) + " is outside" + where());
        if (begin > end)
          return fail(ErrorCode::InvalidSlice, tensorStart,
                      indexerText(ix) + where() + " resolves to start " + decimal(begin) +
                          " > stop " + decimal(end));
      }
    }
    if (d >= count || indexers[d].kind == SliceIndexer::Kind::Range)
      out.shape.push_back(end - begin);
    slices[d] = {begin, end - begin, 0};
    empty = empty || begin == end;
  }
  // Checked after every indexer, so an empty slice still reports errors in later dimensions.
  // Past this point every dimension is >= 1, so every product below is bounded by the tensor's
  // bit count, which a valid header keeps within 64 bits.
  if (empty) return {};

  // Trailing dimensions taken whole merge with the last partial one into a single run; the
  // dimensions before that (the loops) place copies of the run, never adjacent to each other.
  uint32_t partial = rank;
  while (partial > 0 && slices[partial - 1].begin == 0 &&
         slices[partial - 1].count == dims[partial - 1])
    --partial;
  uint64_t stride = dtypeBits(tensor.dtype);
  for (uint32_t d = rank; d-- > 0;) {
    slices[d].strideBits = stride;
    stride *= dims[d];
  }
  if (partial == 0) {
    out.byteLength = tensor.end - tensor.begin;
    out.ranges.push_back({tensorStart, tensorStart + out.byteLength});
    return {};
  }
  const DimSlice& runDim = slices[partial - 1];
  const uint64_t runBits = runDim.count * runDim.strideBits;
  uint64_t baseBits = 0;
  for (uint32_t d = 0; d < partial; ++d) baseBits += slices[d].begin * slices[d].strideBits;

  // Every range begins at baseBits plus a sum of loop strides, so all are byte-aligned exactly
  // when the first range, the run length and each loop's stride are. The error names the first
  // bad boundary in file order: the first range's begin or end, else the begin of the range one
  // step along the innermost misaligned loop.
  uint64_t badBit = UINT64_MAX;
  if (baseBits % 8 != 0) {
    badBit = baseBits;
  } else if (runBits % 8 != 0) {
    badBit = baseBits + runBits;
  } else {
    for (uint32_t d = partial - 1; d-- > 0 && badBit == UINT64_MAX;)
      if (slices[d].count > 1 && slices[d].strideBits % 8 != 0)
        badBit = baseBits + slices[d].strideBits;
  }
  if (badBit != UINT64_MAX)
    return fail(ErrorCode::MisalignedSlice, tensorStart + badBit / 8,
                "a slice range would begin or end at bit " + decimal(badBit) +
                    " of the tensor's data, inside byte " + decimal(badBit / 8));

  std::vector<Loop> loops;
  uint64_t rangeCount = 1;
  for (uint32_t d = 0; d + 1 < partial; ++d) {
    if (slices[d].count == 1) continue;  // fixed: already part of baseBits
    loops.push_back({slices[d].strideBits / 8, slices[d].count, 0});
    rangeCount *= slices[d].count;
  }
  if (rangeCount > out.ranges.max_size())
    return fail(ErrorCode::InvalidSlice, tensorStart,
                "the slice needs " + decimal(rangeCount) +
                    " byte ranges, more than this platform can hold");
  if (!heapHolds(rangeCount * sizeof(ByteRange)))
    return fail(ErrorCode::OutOfMemory, tensorStart,
                "the slice needs " + decimal(rangeCount) + " byte ranges, " +
                    decimal(rangeCount * sizeof(ByteRange)) +
                    " bytes, more than the heap has free: slice fewer rows at once, or free "
                    "tensors no longer needed");
  const uint64_t runBytes = runBits / 8;
  out.byteLength = runBytes * rangeCount;
  out.ranges.reserve(static_cast<size_t>(rangeCount));
  uint64_t at = tensorStart + baseBits / 8;
  if (loops.empty()) {
    out.ranges.push_back({at, at + runBytes});
    return {};
  }
  // An odometer over the loops: the innermost one runs in a tight loop, the others carry.
  const Loop inner = loops.back();
  for (uint64_t row = rangeCount / inner.count; row-- > 0;) {
    uint64_t begin = at;
    for (uint64_t i = 0; i < inner.count; ++i, begin += inner.stride)
      out.ranges.push_back({begin, begin + runBytes});
    for (size_t d = loops.size() - 1; d-- > 0;) {
      Loop& loop = loops[d];
      if (++loop.index < loop.count) {
        at += loop.stride;
        break;
      }
      loop.index = 0;
      at -= (loop.count - 1) * loop.stride;
    }
  }
  return {};
}

}  // namespace st
