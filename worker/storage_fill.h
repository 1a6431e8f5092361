// The bytes of a filled storage (docs/graph-format.md "Filled storages"), drawn as graph_format.py's
// fill_storage draws them, so the C++ worker, the Python worker and repro.py run the same values.
#pragma once

#include <cstdint>

#include <ATen/ATen.h>

#include "common/graph_document.h"

namespace minifyd::worker {

// A flat uint8 CPU tensor of `nbytes` bytes (a whole number of fill.dtype elements).
at::Tensor filled_storage_bytes(const StorageFill& fill, std::uint64_t nbytes);

}  // namespace minifyd::worker
