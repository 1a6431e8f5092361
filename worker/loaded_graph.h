// A request's graph made runnable: decoded and validated, with its inputs and constants loaded
// from the content store onto this worker's devices.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include "common/content_store.h"
#include "common/expected.h"
#include "common/graph_document.h"
#include "worker/blob_cache.h"
#include "worker/eager_interpreter.h"

namespace minifyd::worker {

struct LoadedGraph {
  GraphDocument document;
  std::vector<at::Tensor> inputs;
  ConstantMap constants;
};

// Errors name what is wrong: the document's field, or the blob's hash.
Expected<LoadedGraph> load_graph(const nlohmann::json& graph, const ContentStore& store,
                                 std::optional<at::Device> cuda_device, BlobCache* cache);

// Fresh copies of the inputs, as IValues, so that a run mutating its inputs leaves the originals
// for the next run. `to_fp64` also casts floating tensors to float64 (the seeds' cast_to_fp64).
std::vector<c10::IValue> copy_inputs(const std::vector<at::Tensor>& inputs, bool to_fp64 = false);
ConstantMap constants_as_fp64(const ConstantMap& constants);

}  // namespace minifyd::worker
