// Storage blobs become flat byte tensors; each tensor is a typed view set onto one of them.
#include "worker/tensor_loader.h"

#include "worker/blob_bytes.h"
#include "worker/storage_fill.h"
#include "worker/torch_compat.h"

namespace minifyd::worker {

Expected<at::Tensor> TensorLoader::storage_bytes(std::size_t index) {
  if (auto found = storages_.find(index); found != storages_.end()) return found->second;
  const StorageRef& storage = document_.storages.at(index);
  bool on_cuda = storage.device.rfind("cuda", 0) == 0;
  if (on_cuda && !cuda_device_)
    return make_error(ErrorKind::unsupported, "storage " + std::to_string(index) + " is on " + storage.device +
                                                  " but this worker sees no GPU");
  at::Device device = on_cuda ? *cuda_device_ : at::Device(at::kCPU);
  const FileIdentity* vouched = nullptr;
  if (vouched_ != nullptr)
    if (auto found = vouched_->find(storage.hash); found != vouched_->end()) vouched = &found->second;
  at::Tensor bytes;
  if (storage.fill) {
    bytes = filled_storage_bytes(*storage.fill, storage.nbytes);
    if (on_cuda) bytes = bytes.to(device);
  } else if (cache_) {
    auto cached = cache_->read(store_, storage.hash, storage.nbytes, device, vouched);
    if (!cached) return cached.error().with_context("storage " + std::to_string(index));
    bytes = std::move(*cached);
    // Two storages of the same bytes (two zero biases) are two storages still: a run's copies of
    // them must not alias (fresh_arguments copies each storage once).
    if (!cached_storages_.insert(bytes.storage().unsafeGetStorageImpl()).second)
      bytes = at::empty({0}, bytes.options()).set_(copy_storage(bytes.storage()), 0, bytes.sizes(), bytes.strides());
  } else {
    auto read = read_blob_bytes(store_, storage.hash, storage.nbytes, vouched);
    if (!read) return read.error().with_context("storage " + std::to_string(index));
    bytes = on_cuda ? read->to(device) : std::move(*read);
  }
  storages_.emplace(index, bytes);
  return bytes;
}

Expected<at::Tensor> TensorLoader::load(const TensorMeta& tensor) {
  auto bytes = storage_bytes(tensor.storage);
  if (!bytes) return bytes.error();
  at::Tensor view = at::empty({0}, bytes->options().dtype(to_scalar_type(tensor.dtype)));
  view.set_(bytes->storage(), tensor.storage_offset, tensor.shape, tensor.stride);
  if (tensor.requires_grad && at::isFloatingType(view.scalar_type())) view.requires_grad_(true);
  return view;
}

Expected<std::vector<c10::IValue>> TensorLoader::load_inputs() {
  std::vector<c10::IValue> inputs;
  inputs.reserve(document_.inputs.size());
  for (std::size_t i = 0; i < document_.inputs.size(); ++i) {
    const TensorMeta* meta = input_tensor(document_.inputs[i]);
    if (meta == nullptr) {
      inputs.emplace_back(std::get<SymIntInput>(document_.inputs[i]).value);
      continue;
    }
    auto tensor = load(*meta);
    if (!tensor) return tensor.error().with_context("inputs[" + std::to_string(i) + "]");
    inputs.push_back(std::move(*tensor));
  }
  return inputs;
}

Expected<std::unordered_map<std::string, at::Tensor>> TensorLoader::load_constants() {
  std::unordered_map<std::string, at::Tensor> constants;
  for (const auto& [name, meta] : document_.constants) {
    auto tensor = load(meta);
    if (!tensor) return tensor.error().with_context("constants." + name);
    constants.emplace(name, std::move(*tensor));
  }
  return constants;
}

}  // namespace minifyd::worker
