// Messages between the coordinator and a worker (docs/protocol.md): JSON lines on the worker's
// stdin (requests) and stdout (hello, then one reply per request). Plain structs; encode/decode
// beside them; every decode names the path of a bad field.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/expected.h"
#include "common/file_identity.h"
#include "common/graph_document.h"
#include "common/json_view.h"
#include "common/operator_library.h"
#include "protocol/bisect_messages.h"
#include "protocol/output_code.h"
#include "protocol/value_measurement.h"
#include "protocol/verdict.h"

namespace minifyd::protocol {

inline constexpr const char* worker_protocol_name = "minifyd.worker";
inline constexpr int worker_protocol_version = 1;
// The deepest nesting of arrays and objects a request may have (the Python worker's MAX_NESTING): a
// graph document nests about ten levels; what is deeper is hostile, and would exhaust the recursion
// of whatever walks it. Both workers answer it with the same error.
inline constexpr std::size_t worker_max_nesting = 64;

// A request line parsed; errors: it nests deeper than worker_max_nesting ("the line nests more than the
// 64 levels allowed", as the Python worker says it), or it is not JSON.
Expected<nlohmann::json> parse_worker_request_line(std::string_view line);

struct DeviceInfo {
  int index = 0;
  std::string name;
  std::string uuid;
};

// The worker's first line. The coordinator refuses a worker whose protocol or version differ.
struct WorkerHello {
  std::string protocol = worker_protocol_name;
  int version = worker_protocol_version;
  std::int64_t pid = 0;
  std::string torch_version;
  std::vector<DeviceInfo> devices;  // as the worker sees them (CUDA_VISIBLE_DEVICES applied)
  // How many requests the worker serves at once (at least 1; a hello without it means 1). A worker
  // of concurrency 1 is driven one request at a time and, unless it serves in children, never sent a
  // cancel.
  std::uint64_t concurrency = 1;
  // The backends it serves ("plugin" standing for every plugin:PATH.so); empty when the hello does
  // not say, as older workers' do not: the coordinator then finds out from the first request.
  std::vector<std::string> backends;
  // Each request is served in a forked child whose end (a CUDA error, a crash, a cancel) never ends the
  // worker, which serves on (the Python worker with a GPU: renewing_server.py). A worker of concurrency
  // 1 that says so is sent cancels, kept after a CUDA error and needs no spare; one that does not is
  // killed to cancel and retired after a CUDA error.
  bool serves_in_children = false;
  // What the worker observes of its sandbox (environment names, open descriptors, process group,
  // working directory): diagnostics for logs and tests, never interpreted by the coordinator.
  nlohmann::json sandbox = nlohmann::json::object();
};

// Run a candidate with a backend and judge it against eager (and fp64 for accuracy modes).
// Blobs of the request's store that the coordinator wrote and hashed itself, by hash, with their
// files' identity then: a worker need not hash one again while its file still has that identity.
using VouchedBlobs = std::map<std::string, FileIdentity>;

// The entries of `vouched` that name blobs of `document`: what a request for it carries.
VouchedBlobs vouched_for(const VouchedBlobs& vouched, const GraphDocument& document);

struct EvaluateRequest {
  std::uint64_t id = 0;
  nlohmann::json graph;  // a graph document (docs/graph-format.md), validated again by the worker
  std::string store;     // path of the content store holding its tensors
  std::string backend;   // "eager", "torchscript" or "plugin:PATH.so"
  std::map<std::string, std::string> backend_options;
  AccuracyMode accuracy = AccuracyMode::off;
  // Also fail when the compiled output holds NaN or Inf while no input does (checked before accuracy).
  bool nan_check = false;
  // A probe of `minify bisect` (torch.compile backends only): the backend is the stage probed.
  std::optional<BisectProbe> bisect{};
  // output_code_run or output_code_compile (protocol/output_code.h): the reply carries the generated code.
  std::optional<std::string> output_code{};
  // More than 1: the worker may compile a GPU graph's Triton kernels in a pool of this many processes
  // (Inductor's compile_threads), as the coordinator asks for the sanity check, which the other workers
  // wait for. The verdict is the serial compile's: a compile that fails in the pool is compiled again serially.
  std::uint64_t compile_threads = 1;
  VouchedBlobs vouched{};
  // The job's operator libraries (common/operator_library.h): the worker loads them, checked against their
  // hashes, in a process that serves no request naming others, and the graph may call their namespaces.
  std::vector<OperatorLibrary> op_libraries{};
};

// Run eagerly and write every intermediate tensor into the store (fx_minifier's ConcreteProp).
struct PropagateRequest {
  std::uint64_t id = 0;
  nlohmann::json graph;
  std::string store;
  // For `minify analyze`: every node's tensor value, an alias of an earlier one included (as a
  // copy of its own: analysis feeds each node alone, where aliasing no longer matters); and when
  // a node fails, the values before it and the failure instead of an error.
  bool for_analysis = false;
  VouchedBlobs vouched{};
  std::vector<OperatorLibrary> op_libraries{};  // as EvaluateRequest's
};

// Measure the values of `nodes` (call_function nodes, in graph order): the graph compiled once with
// those values exposed, run twice, each value compared with eager's and an fp64 reference's (run
// twice too). A graph whose output is one of `nodes` alone exposes nothing more (`minify analyze`'s
// isolated mode sends each node so).
struct AnalyzeRequest {
  std::uint64_t id = 0;
  nlohmann::json graph;
  std::string store;
  std::string backend;
  std::map<std::string, std::string> backend_options;
  std::vector<std::string> nodes;
  VouchedBlobs vouched{};
  std::vector<OperatorLibrary> op_libraries{};  // as EvaluateRequest's
};

struct ShutdownRequest {
  std::uint64_t id = 0;
};

// Stop serving request `id`: the worker kills whatever serves it, or drops it from its queue, and
// replies to neither that request nor the cancel. An id it does not know is ignored.
struct CancelRequest {
  std::uint64_t id = 0;
};

// Whether a worker whose hello lists `backends` serves `backend` (any backend when it lists none).
bool serves(const std::vector<std::string>& backends, const std::string& backend);

using WorkerRequest = std::variant<EvaluateRequest, PropagateRequest, AnalyzeRequest, ShutdownRequest, CancelRequest>;

struct EvaluateReply {
  std::uint64_t id = 0;
  Verdict verdict;
  // Where the worker's time went: compiling, running, loading the graph and its tensors, checking the
  // outputs (against eager and fp64 for an accuracy check), and waiting for the GPU before the run
  // (the Python worker's run lock), and waiting in the worker for a process to serve it (the Python
  // worker with a GPU, after a CUDA error ended the one that served before); the last four for the
  // run's timeline.
  double compile_ms = 0;
  double run_ms = 0;
  double load_ms = 0;
  double check_ms = 0;
  double device_wait_ms = 0;
  double start_wait_ms = 0;
  // The worker exits after this reply (the Python worker serving in its own process, after a
  // failure, so that no candidate runs where another failed): it must be sent nothing more.
  bool retiring = false;
  // What a bisect probe observed (the request's bisect was set).
  std::optional<BisectObservation> bisect{};
  // The generated code and the failing kernel (the request's output_code was set).
  std::optional<OutputCode> output_code{};
};

// One intermediate value written by propagate: the node's tensor, by storage hash and metadata.
struct PropagatedValue {
  std::string node;
  StorageRef storage;
  TensorMeta tensor;  // tensor.storage is unused (0): each value names its own storage
};

struct PropagateReply {
  std::uint64_t id = 0;
  std::vector<PropagatedValue> values;
  // The store root the worker wrote naming every value's blob, so gc keeps them until the
  // coordinator has recorded them under its own root and removed this one.
  std::string root;
  // For analysis, the node where eager failed: values stop before it.
  std::optional<Verdict> eager_failure;
  bool retiring = false;  // as EvaluateReply's
};

// How an analyze read the intermediate values: as added outputs of the compiled graph (which may
// change what a compiler fuses) or through the compiler's own hooks (Inductor's intermediate hooks).
inline constexpr const char* exposure_outputs = "outputs";
inline constexpr const char* exposure_hooks = "hooks";

struct AnalyzeReply {
  std::uint64_t id = 0;
  std::string exposure = exposure_outputs;
  // Compiling or running the compiled graph failed: no values.
  std::optional<Verdict> compiled_failure;
  // Eager failed (its exception), so there is nothing to compare with.
  std::optional<Verdict> eager_failure;
  std::vector<ValueMeasurement> values;  // one per requested node, in the request's order
  double compile_ms = 0;
  double run_ms = 0;  // of the first compiled run
  bool retiring = false;  // as EvaluateReply's
};

// A request the worker could not act on (malformed, invalid graph, unreadable store). This says
// nothing about the candidate; the coordinator treats it as an infrastructure error.
struct ErrorReply {
  std::uint64_t id = 0;
  std::string message;
};

using WorkerReply = std::variant<EvaluateReply, PropagateReply, AnalyzeReply, ErrorReply>;

// Written between replies by a worker serving in children (its hello says so), and by no other:
// whether a request sent now would start at once, or wait for a child to get ready (the serving one
// ended by a CUDA error, a crash or a cancel while the waiting one warms up). It says false before the
// reply that ends the serving child, so the coordinator sends no request meanwhile, and true once a child
// is ready; and it answers every cancel with one, whatever it says (a cancel has no reply).
struct Readiness {
  bool ready = true;
};

// The failure a reply reports of the compiled graph (an evaluate's failing verdict, an analyze's
// compiled failure), or null; and whether the worker exits after it.
const Verdict* compiled_failure_of(const WorkerReply& reply);
bool announces_retirement(const WorkerReply& reply);

nlohmann::json encode(const PropagatedValue& value);
Expected<PropagatedValue> decode_propagated_value(const JsonView& view);

nlohmann::json encode(const WorkerHello& hello);
nlohmann::json encode(const WorkerRequest& request);
nlohmann::json encode(const WorkerReply& reply);
nlohmann::json encode(const Readiness& readiness);

Expected<WorkerHello> decode_hello(const nlohmann::json& json);
Expected<WorkerRequest> decode_request(const nlohmann::json& json);
Expected<WorkerReply> decode_reply(const nlohmann::json& json);
// Whether a line the worker wrote after its hello is a readiness line (its type says so), which
// decode_readiness then reads; every other is a reply.
bool is_readiness(const nlohmann::json& json);
Expected<Readiness> decode_readiness(const nlohmann::json& json);

// The id of any request or reply (a cancel's is the id of the request it cancels).
std::uint64_t id_of(const WorkerRequest& request);
std::uint64_t id_of(const WorkerReply& reply);

}  // namespace minifyd::protocol
