// Blobs mapped into storages whose DataPtr owns the MappedFile; that DataPtr's deleter marks them.
#include "worker/blob_bytes.h"

#include <memory>

#include <c10/core/CPUAllocator.h>

namespace minifyd::worker {
namespace {

void release_mapping(void* context) { delete static_cast<MappedFile*>(context); }

// The CPU allocator serves the storage's resizes, which copy its bytes into memory of its own and
// then release the mapping.
c10::Storage mapped_storage(MappedFile mapped) {
  auto owned = std::make_unique<MappedFile>(std::move(mapped));
  void* data = owned->data();
  std::size_t size = owned->size();
  c10::DataPtr pointer(data, owned.release(), &release_mapping, at::Device(at::kCPU));
  return c10::Storage(c10::Storage::use_byte_size_t(), size, std::move(pointer), c10::GetDefaultCPUAllocator(), true);
}

at::Tensor bytes_of(const c10::Storage& storage) {
  return at::empty({0}, at::TensorOptions(storage.device()).dtype(at::kByte))
      .set_(storage, 0, {static_cast<std::int64_t>(storage.nbytes())}, {1});
}

}  // namespace

Expected<at::Tensor> read_blob_bytes(const ContentStore& store, const std::string& hash, std::uint64_t nbytes,
                                     const FileIdentity* vouched) {
  if (nbytes >= min_mapped_blob_bytes) {
    auto mapped = store.map(hash, nbytes, vouched);
    if (!mapped) return mapped.error();
    return bytes_of(mapped_storage(std::move(*mapped)));
  }
  at::Tensor bytes = at::empty({static_cast<std::int64_t>(nbytes)}, at::TensorOptions(at::kByte));
  auto read = store.read_into(hash, bytes.data_ptr(), nbytes);
  if (!read) return read.error();
  return bytes;
}

c10::Storage copy_storage(const c10::Storage& storage) {
  const c10::DataPtr& pointer = storage.data_ptr();
  if (pointer.get_deleter() == &release_mapping) {
    // A storage made here still holds its mapping (a resize would have replaced the deleter).
    if (auto again = static_cast<const MappedFile*>(pointer.get_context())->remap()) return mapped_storage(std::move(*again));
  }
  return bytes_of(storage).clone().storage();
}

}  // namespace minifyd::worker
