// The input shrinking's smaller sizes (shrink/input_shrink.h), proposed by minifyd/shape_shrink.py in
// the run's python: the graph traced again with symbolic sizes, the free ones made smaller.
#pragma once

#include <filesystem>
#include <string>

#include "daemon/shrink/input_shrink.h"

namespace minifyd::run {

// Proposals for a document whose blobs are in `store`; the blobs of the smaller inputs go there too,
// named by the store root `root` (the run drops it with its other roots when it ends).
shrink::ShapeProposer shape_proposer(std::string python, std::filesystem::path store, std::string root);

}  // namespace minifyd::run
