// Writes a tensor's whole storage into the content store and describes the tensor as a view of
// it, exactly as it is (shape, stride, offset, dtype): the inverse of TensorLoader.
#pragma once

#include <ATen/ATen.h>

#include "common/content_store.h"
#include "common/expected.h"
#include "common/graph_document.h"

namespace minifyd::worker {

struct StoredTensor {
  StorageRef storage;
  TensorMeta tensor;  // tensor.storage is 0: the caller places the storage in its own table
};

// A dtype the graph format cannot name (quantized types) is an unsupported error. The bytes go into
// `blobs`, durable at its sync(), which comes before any root names them.
Expected<StoredTensor> store_tensor(BlobBatch& blobs, const at::Tensor& tensor);

}  // namespace minifyd::worker
