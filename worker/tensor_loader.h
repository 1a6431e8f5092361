// Materialises a graph document's tensors from the content store (or their storages' fills) as at::Tensors. Tensors naming
// the same storage become views of one at::Storage, as they were when exported. Storages exported
// from any CUDA device go to the worker's own GPU (it sees one, as cuda:0); others to the CPU.
#pragma once

#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <ATen/ATen.h>

#include "common/content_store.h"
#include "common/expected.h"
#include "common/graph_document.h"
#include "protocol/worker_messages.h"
#include "worker/blob_cache.h"

namespace minifyd::worker {

// Borrows the document and the store, which must outlive it. Not thread-safe.
class TensorLoader {
 public:
  // cuda_device: where "cuda" storages go; unset means this worker has no GPU (an error for them).
  // cache, when given, serves blobs already read and verified by earlier requests; the tensors
  // loaded then view the cache's bytes, which only copies of them may write (fresh_arguments).
  // vouched, when given, names blobs not to hash again while their files keep the identity given.
  TensorLoader(const GraphDocument& document, const ContentStore& store, std::optional<at::Device> cuda_device,
               BlobCache* cache = nullptr, const protocol::VouchedBlobs* vouched = nullptr)
      : document_(document), store_(store), cuda_device_(cuda_device), cache_(cache), vouched_(vouched) {}

  // One tensor; its storage is read (and verified) once and shared by every later view of it.
  Expected<at::Tensor> load(const TensorMeta& tensor);
  // The values of the graph's placeholders, in order: tensors, and ints for SymInt inputs.
  Expected<std::vector<c10::IValue>> load_inputs();
  // The get_attr constants, by target.
  Expected<std::unordered_map<std::string, at::Tensor>> load_constants();

 private:
  Expected<at::Tensor> storage_bytes(std::size_t index);

  const GraphDocument& document_;
  const ContentStore& store_;
  std::optional<at::Device> cuda_device_;
  BlobCache* cache_;
  const protocol::VouchedBlobs* vouched_;
  std::unordered_map<std::size_t, at::Tensor> storages_;  // storage index -> flat uint8 tensor
  std::unordered_set<const c10::StorageImpl*> cached_storages_;  // the cache's, each given to one storage index
};

}  // namespace minifyd::worker
