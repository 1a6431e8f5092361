// Evaluate: compile, run, judge against eager (and fp64). Propagate: eager intermediates to the store.
#include "worker/request_handler.h"

#include <chrono>
#include <iostream>
#include <unordered_set>

#include "common/canonical_hash.h"
#include "common/content_store.h"
#include "worker/accuracy.h"
#include "worker/backends/backend_registry.h"
#include "worker/device_sync.h"
#include "worker/loaded_graph.h"
#include "worker/nan_check.h"
#include "worker/tensor_writer.h"
#include "worker/value_analysis.h"

namespace minifyd::worker {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// CUDA's errors, whichever C++ type carries them (c10::Error in 1.x, c10::CUDAError or
// c10::AcceleratorError in 2.x): their message says "CUDA error".
bool is_cuda_failure(const NodeFailure& failure) {
  return failure.exception_type.find("CUDAError") != std::string::npos ||
         failure.exception_type.find("AcceleratorError") != std::string::npos ||
         failure.message.find("CUDA error") != std::string::npos;
}

protocol::Verdict exception_verdict(const NodeFailure& failure) {
  protocol::Verdict verdict = protocol::Verdict::failed(
      is_cuda_failure(failure) ? protocol::FailureKind::cuda_error : protocol::FailureKind::exception,
      (failure.argument.empty() ? "" : "argument '" + failure.argument + "': ") + failure.message);
  // Failures the interpreter detects itself (unknown operator, unbindable argument) have no C++
  // exception; they get a type of their own so signatures still tell them apart.
  verdict.exception_type = failure.exception_type.empty() ? std::string("minifyd::") + to_string(failure.kind)
                                                          : failure.exception_type;
  verdict.node = failure.node;
  verdict.op = failure.op;
  return verdict;
}

protocol::Verdict nan_verdict(const std::string& output) {
  return protocol::Verdict::failed(protocol::FailureKind::nan, output + " while no input does");
}

// The accuracy check of a compiled run's output, as the seeds' same_two_models: a candidate whose
// references cannot be computed is not an accuracy failure; `accuracy` requires the fp64 reference,
// `strict-accuracy` does without. A CUDA error in a reference is the verdict: the compiled graph's
// kernels may have broken the context the references run in.
std::optional<protocol::Verdict> accuracy_failure(const LoadedGraph& loaded, const c10::IValue& compiled_output,
                                                  protocol::AccuracyMode mode, std::optional<at::Device> cuda_device) {
  const Graph& graph = loaded.document.graph;
  RunArguments eager_arguments = fresh_arguments(loaded);
  EagerResult eager = EagerInterpreter(graph, EagerOptions{cuda_device, false}).run(eager_arguments.inputs, eager_arguments.constants);
  if (eager.failure) {
    if (is_cuda_failure(*eager.failure)) return exception_verdict(*eager.failure);
    std::cerr << "accuracy check skipped, eager reference failed: " << eager.failure->to_string() << std::endl;
    return std::nullopt;
  }
  RunArguments fp64_arguments = fresh_arguments(loaded, true);
  EagerResult fp64 = EagerInterpreter(graph, EagerOptions{cuda_device, true}).run(fp64_arguments.inputs, fp64_arguments.constants);
  bool strict = mode == protocol::AccuracyMode::strict_accuracy;
  if (fp64.failure && is_cuda_failure(*fp64.failure)) return exception_verdict(*fp64.failure);
  if (fp64.failure) {
    std::cerr << "fp64 reference failed: " << fp64.failure->to_string() << std::endl;
    if (!strict) return std::nullopt;
  }
  AccuracyCheck check = compare_outputs(eager.output, compiled_output,
                                        fp64.failure ? std::nullopt : std::optional<c10::IValue>(fp64.output),
                                        AccuracyOptions{1e-3, !strict});
  if (check.passes) return std::nullopt;
  protocol::Verdict verdict = protocol::Verdict::failed(protocol::FailureKind::accuracy, check.detail);
  verdict.accuracy = check.report;
  return verdict;
}

protocol::ErrorReply error_reply(std::uint64_t id, const Error& error) { return {id, error.message}; }

Expected<ContentStore> open_store(const std::string& path) { return ContentStore::open(path, false); }

}  // namespace

RequestHandler::RequestHandler(std::optional<at::Device> cuda_device, std::uint64_t cache_bytes)
    : cuda_device_(cuda_device), cache_(cache_bytes) {}
RequestHandler::~RequestHandler() = default;

Expected<Backend*> RequestHandler::backend(const std::string& spec, const BackendOptions& options) {
  std::string key = spec;
  for (const auto& [name, value] : options) key += "\n" + name + "=" + value;
  auto found = backends_.find(key);
  if (found != backends_.end()) return found->second.get();
  auto created = make_backend(spec, options);
  if (!created) return created.error();
  return backends_.emplace(key, std::move(*created)).first->second.get();
}

template <class Request>
Expected<LoadedGraph> RequestHandler::load(const Request& request, const ContentStore& store) {
  if (auto required = libraries_.require(request.op_libraries); !required) return required.error();
  return load_graph(request.graph, store, cuda_device_, &cache_, request.vouched, operator_scope(request.op_libraries));
}

template <class Request>
Expected<RequestHandler::Prepared> RequestHandler::prepare(const Request& request) {
  auto store = open_store(request.store);
  if (!store) return store.error();
  auto loaded = load(request, *store);
  if (!loaded) return loaded.error();
  auto chosen = backend(request.backend, request.backend_options);
  if (!chosen) return chosen.error();
  return Prepared{std::move(*loaded), *chosen};
}

protocol::WorkerReply RequestHandler::evaluate(const protocol::EvaluateRequest& request) {
  auto start = Clock::now();
  auto prepared = prepare(request);
  if (!prepared) return error_reply(request.id, prepared.error());
  const LoadedGraph& loaded = prepared->graph;
  Backend& chosen = *prepared->backend;

  protocol::EvaluateReply reply;
  reply.id = request.id;
  EagerOptions eager_options{cuda_device_, false};
  // The inputs as loaded: the run may write to its own copies in place. An input holding NaN or
  // Inf explains a non-finite output, so the nan check has nothing to report then.
  bool check_nan = request.nan_check && !holds_non_finite(loaded.inputs);
  // The compiled graph keeps its constants for as long as it lives.
  RunArguments compiled_arguments = fresh_arguments(loaded);
  reply.load_ms = ms_since(start);
  start = Clock::now();
  CompileResult compiled = chosen.compile(loaded.document.graph, compiled_arguments.constants,
                                              BackendContext{eager_options, loaded.document.inputs});
  reply.compile_ms = ms_since(start);
  if (compiled.failure) {
    // Compiling may launch kernels too (autotuning): a broken one is the cause of what failed.
    std::optional<NodeFailure> sticky = cuda_device_ ? synchronize_device() : std::nullopt;
    reply.verdict = exception_verdict(sticky ? *sticky : *compiled.failure);
    return reply;
  }
  start = Clock::now();
  EagerResult result = compiled.compiled->run(compiled_arguments.inputs);
  // Kernels run asynchronously: their errors surface here, inside the query's time limit. A
  // library call after a broken kernel may fail first in words of its own (cuDNN's
  // CUDNN_STATUS_EXECUTION_FAILED_CUDART); CUDA's sticky error is the cause, so it takes precedence.
  if (cuda_device_)
    if (auto sticky = synchronize_device()) result.failure = std::move(sticky);
  reply.run_ms = ms_since(start);
  if (result.failure) {
    reply.verdict = exception_verdict(*result.failure);
    return reply;
  }
  if (check_nan) {
    if (auto non_finite = non_finite_output(result.output)) {
      reply.verdict = nan_verdict(*non_finite);
      return reply;
    }
  }
  if (request.accuracy == protocol::AccuracyMode::off) return reply;
  start = Clock::now();
  if (auto failure = accuracy_failure(loaded, result.output, request.accuracy, cuda_device_)) reply.verdict = std::move(*failure);
  reply.check_ms = ms_since(start);
  return reply;
}

protocol::WorkerReply RequestHandler::propagate(const protocol::PropagateRequest& request) {
  auto store = open_store(request.store);
  if (!store) return error_reply(request.id, store.error());
  auto loaded = load(request, *store);
  if (!loaded) return error_reply(request.id, loaded.error());
  auto lock = store->lock_shared();  // keeps gc away until the root below names the blobs
  if (!lock) return error_reply(request.id, lock.error());

  protocol::PropagateReply reply;
  reply.id = request.id;
  // As the seeds' ConcreteProp: a value whose storage aliases one seen before (an input, a
  // constant or an earlier value) is not stored, since feeding it as an independent input would
  // break the aliasing the operators rely on (an analysis, which feeds each node alone, stores it
  // anyway). Weak references keep storages from being freed and their addresses reused while the
  // run goes on.
  std::vector<c10::weak_intrusive_ptr<c10::StorageImpl>> seen_storages;
  std::unordered_set<const c10::StorageImpl*> seen;
  std::optional<Error> write_error;
  BlobBatch blobs(*store);
  auto on_node = [&](const Node& node, const c10::IValue& value) {
    if (!value.isTensor() || write_error) return;
    const at::Tensor& tensor = value.toTensor();
    if (!tensor.has_storage()) return;
    const c10::Storage& storage = tensor.storage();
    if (!seen.insert(storage.unsafeGetStorageImpl()).second && !request.for_analysis) return;
    seen_storages.push_back(storage.getWeakStorageImpl());
    if (node.op() != OpCode::call_function) return;
    auto stored = store_tensor(blobs, tensor);
    if (!stored) {
      // A dtype the format cannot name stays a computation; anything else is a failed write.
      if (stored.error().kind != ErrorKind::unsupported) write_error = stored.error().with_context("node '" + node.name() + "'");
      return;
    }
    protocol::PropagatedValue propagated{node.name(), stored->storage, stored->tensor};
    reply.values.push_back(std::move(propagated));
  };
  RunArguments arguments = fresh_arguments(*loaded);
  EagerResult result = EagerInterpreter(loaded->document.graph, EagerOptions{cuda_device_, false})
                           .run(arguments.inputs, arguments.constants, on_node);
  if (result.failure && !request.for_analysis)
    return protocol::ErrorReply{request.id, "eager run failed: " + result.failure->to_string()};
  if (result.failure) reply.eager_failure = exception_verdict(*result.failure);
  if (write_error) return error_reply(request.id, *write_error);
  if (auto synced = blobs.sync(); !synced) return error_reply(request.id, synced.error());
  std::vector<std::string> hashes;
  for (const auto& value : reply.values) hashes.push_back(value.storage.hash);
  reply.root = "intermediates-" + canonical_hash(loaded->document).substr(0, 16);
  if (auto written = store->write_root(reply.root, hashes); !written) return error_reply(request.id, written.error());
  return reply;
}

protocol::WorkerReply RequestHandler::analyze(const protocol::AnalyzeRequest& request) {
  auto prepared = prepare(request);
  if (!prepared) return error_reply(request.id, prepared.error());
  const LoadedGraph& loaded = prepared->graph;
  Backend& chosen = *prepared->backend;
  auto exposed = expose_values(loaded.document.graph, request.nodes);
  if (!exposed) return error_reply(request.id, exposed.error());

  protocol::AnalyzeReply reply;
  reply.id = request.id;
  EagerOptions eager_options{cuda_device_, false};
  RunArguments compiled_arguments = fresh_arguments(loaded);
  auto start = Clock::now();
  CompileResult compiled =
      chosen.compile(*exposed, compiled_arguments.constants, BackendContext{eager_options, loaded.document.inputs});
  reply.compile_ms = ms_since(start);
  if (compiled.failure) {
    std::optional<NodeFailure> sticky = cuda_device_ ? synchronize_device() : std::nullopt;
    reply.compiled_failure = exception_verdict(sticky ? *sticky : *compiled.failure);
    return reply;
  }
  // Each run on fresh inputs: a run may write to them in place.
  auto run_compiled = [&]() {
    EagerResult result = compiled.compiled->run(fresh_arguments(loaded).inputs);
    if (cuda_device_)
      if (auto sticky = synchronize_device()) result.failure = std::move(sticky);
    return result;
  };
  start = Clock::now();
  EagerResult first = run_compiled();
  reply.run_ms = ms_since(start);
  EagerResult second = first.failure ? EagerResult{} : run_compiled();
  if (first.failure || second.failure) {
    reply.compiled_failure = exception_verdict(first.failure ? *first.failure : *second.failure);
    return reply;
  }
  auto run_eager = [&](bool fp64) {
    RunArguments arguments = fresh_arguments(loaded, fp64);
    return EagerInterpreter(*exposed, EagerOptions{cuda_device_, fp64}).run(arguments.inputs, arguments.constants);
  };
  EagerResult eager = run_eager(false);
  if (eager.failure) {
    reply.eager_failure = exception_verdict(*eager.failure);
    return reply;
  }
  EagerResult fp64 = run_eager(true);
  EagerResult fp64_again = fp64.failure ? EagerResult{} : run_eager(true);
  if (fp64.failure) std::cerr << "fp64 reference failed: " << fp64.failure->to_string() << std::endl;
  ExposedRuns runs{eager.output, first.output, second.output, fp64.failure ? nullptr : &fp64.output,
                   fp64.failure || fp64_again.failure ? nullptr : &fp64_again.output};
  reply.values = measure_values(request.nodes, runs);
  return reply;
}

}  // namespace minifyd::worker
