// The canonical hash of a graph document: equal for the same structure and tensor contents
// whatever the node and constant names, the order of constants and storages, or the JSON layout.
#pragma once

#include <string>

#include "common/graph_document.h"

namespace minifyd {

// SHA-256 hex over the canonical form described in docs/graph-format.md ("Canonical hash").
// The document must be valid (document_problems() empty), as every decoded document is.
std::string canonical_hash(const GraphDocument& document);

}  // namespace minifyd
