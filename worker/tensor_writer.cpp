// Storage bytes to the store, via the CPU.
#include "worker/tensor_writer.h"

#include "worker/torch_compat.h"

namespace minifyd::worker {

Expected<StoredTensor> store_tensor(BlobBatch& blobs, const at::Tensor& tensor) {
  auto dtype = to_dtype(tensor.scalar_type());
  if (!dtype)
    return make_error(ErrorKind::unsupported,
                      std::string("dtype ") + c10::toString(tensor.scalar_type()) + " has no name in the graph format");
  const c10::Storage& storage = tensor.storage();
  auto nbytes = static_cast<std::int64_t>(storage.nbytes());
  at::Tensor bytes = at::empty({0}, tensor.options().dtype(at::kByte)).set_(storage, 0, {nbytes}, {1}).to(at::kCPU).contiguous();
  auto hash = blobs.put(bytes.data_ptr(), static_cast<std::size_t>(nbytes));
  if (!hash) return hash.error();
  return StoredTensor{StorageRef{*hash, static_cast<std::uint64_t>(nbytes), tensor.is_cuda() ? "cuda" : "cpu", std::nullopt},
                      TensorMeta{0, *dtype, tensor.sizes().vec(), tensor.strides().vec(), tensor.storage_offset(),
                                 tensor.requires_grad()}};
}

}  // namespace minifyd::worker
