// A blob's bytes as a flat uint8 CPU tensor, and copies of such bytes. A blob of some size is
// mapped copy-on-write rather than read: no fresh pages filled and no copy made, and a copy for a
// run (fresh_arguments) is a second mapping of the same file, whose pages are shared until the run
// writes one. For a model's weights that is most of what loading them cost.
#pragma once

#include <cstdint>
#include <string>

#include <ATen/ATen.h>

#include "common/content_store.h"
#include "common/expected.h"

namespace minifyd::worker {

// Blobs under this size are read: a mapping costs a page-aligned area of its own.
constexpr std::uint64_t min_mapped_blob_bytes = 64 * 1024;

// The verified bytes of blob `hash`, which must hold `nbytes` bytes, on the CPU. The storage is
// resizable, as a tensor of PyTorch's own is. A mapped blob whose file still has the `vouched`
// identity is not hashed again (ContentStore::map).
Expected<at::Tensor> read_blob_bytes(const ContentStore& store, const std::string& hash, std::uint64_t nbytes,
                                     const FileIdentity* vouched = nullptr);

// A storage of its own holding `storage`'s bytes: a new mapping of the same blob when `storage`
// is one (and the blob's file is still the one mapped), else a copy.
c10::Storage copy_storage(const c10::Storage& storage);

}  // namespace minifyd::worker
