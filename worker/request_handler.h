// Answers the coordinator's requests: evaluate a candidate with a backend and judge it, propagate
// eager intermediates into the store, or analyze chosen nodes' values. One request at a time;
// never throws.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include <ATen/ATen.h>

#include "protocol/worker_messages.h"
#include "worker/backend.h"
#include "worker/blob_cache.h"
#include "worker/loaded_graph.h"
#include "worker/operator_libraries.h"

namespace minifyd::worker {

class RequestHandler {
 public:
  // cuda_device: this worker's GPU (cuda:0 under CUDA_VISIBLE_DEVICES), or unset without one.
  // cache_bytes: how much verified blob data to keep across requests.
  RequestHandler(std::optional<at::Device> cuda_device, std::uint64_t cache_bytes);
  ~RequestHandler();

  protocol::WorkerReply evaluate(const protocol::EvaluateRequest& request);
  protocol::WorkerReply propagate(const protocol::PropagateRequest& request);
  protocol::WorkerReply analyze(const protocol::AnalyzeRequest& request);

 private:
  // Backends live as long as the worker: a plugin is loaded once, not per query.
  Expected<Backend*> backend(const std::string& spec, const BackendOptions& options);

  // A request's graph loaded from its store, and the backend it names.
  struct Prepared {
    LoadedGraph graph;
    Backend* backend = nullptr;
  };
  template <class Request>
  Expected<Prepared> prepare(const Request& request);
  // The request's graph, its operator libraries loaded first (their namespaces allowed in it).
  template <class Request>
  Expected<LoadedGraph> load(const Request& request, const ContentStore& store);

  std::optional<at::Device> cuda_device_;
  BlobCache cache_;
  std::map<std::string, std::unique_ptr<Backend>> backends_;
  OperatorLibraries libraries_;
};

}  // namespace minifyd::worker
