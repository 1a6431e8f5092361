// Materialises a graph document's tensors from the content store as at::Tensors on one device.
// Tensors naming the same storage become views of one at::Storage, as they were when exported.
#pragma once

#include <unordered_map>
#include <vector>

#include <ATen/ATen.h>

#include "common/content_store.h"
#include "common/expected.h"
#include "common/graph_document.h"

namespace minifyd::worker {

// Borrows the document and the store, which must outlive it. Not thread-safe.
class TensorLoader {
 public:
  TensorLoader(const GraphDocument& document, const ContentStore& store, at::Device device)
      : document_(document), store_(store), device_(device) {}

  // One tensor; its storage is read (and verified) once and shared by every later view of it.
  Expected<at::Tensor> load(const TensorMeta& tensor);
  // The values of the graph's placeholders, in order.
  Expected<std::vector<at::Tensor>> load_inputs();

 private:
  Expected<at::Tensor> storage_bytes(std::size_t index);

  const GraphDocument& document_;
  const ContentStore& store_;
  at::Device device_;
  std::unordered_map<std::size_t, at::Tensor> storages_;  // storage index -> flat uint8 tensor
};

}  // namespace minifyd::worker
