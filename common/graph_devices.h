// Which devices a graph document runs on.
#pragma once

#include "common/graph_document.h"

namespace minifyd {

// Whether running the graph can touch a CUDA device: a storage on one, or a node argument naming
// one (the `device=` of a factory or a copy).
bool uses_cuda(const GraphDocument& document);

}  // namespace minifyd
