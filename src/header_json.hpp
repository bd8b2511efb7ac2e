// The SAX handler that turns header JSON into a Header table (rule 5). Internal to header.cpp
// and kept in its own file because it is the one place that knows nlohmann's SAX protocol.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "header.hpp"

namespace st {

// Parses JSON in [begin, end) into out.tensors/metadata/strings/dims (unsorted, unvalidated
// beyond the JSON shape). Duplicates are not checked here. On failure the error carries an
// absolute file offset computed from baseOffset.
Error parseHeaderJson(const char* begin, const char* end, uint64_t baseOffset, Header& out);

}  // namespace st
