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
#include "protocol/worker_messages.h"
#include "worker/blob_cache.h"
#include "worker/eager_interpreter.h"

namespace minifyd::worker {

// Its tensors may be views of the worker's blob cache: read them, and run on fresh_arguments().
struct LoadedGraph {
  GraphDocument document;
  std::vector<c10::IValue> inputs;  // tensors, and ints for SymInt inputs
  ConstantMap constants;
};

// Errors name what is wrong: the document's field, or the blob's hash. `vouched`: blobs not to hash
// again while their files keep the identity the coordinator gives (the request's). `operators`: the
// namespaces the request's operator libraries add to the graph rule.
Expected<LoadedGraph> load_graph(const nlohmann::json& graph, const ContentStore& store,
                                 std::optional<at::Device> cuda_device, BlobCache* cache,
                                 const protocol::VouchedBlobs& vouched = {}, const OperatorScope& operators = {});

// The inputs and constants of one run.
struct RunArguments {
  std::vector<c10::IValue> inputs;
  ConstantMap constants;
};

// Fresh copies of the graph's inputs and constants, so that a run writing to them in place (batch
// norm's running statistics, an in-place op on an input) leaves the originals for the next run, as
// the seeds deep-copy the module for each. Tensors that share a storage share one copy of it, so
// views stay views. `to_fp64` instead casts floating tensors to float64 (the seeds' cast_to_fp64,
// which does not keep aliasing either).
RunArguments fresh_arguments(const LoadedGraph& graph, bool to_fp64 = false);

}  // namespace minifyd::worker
