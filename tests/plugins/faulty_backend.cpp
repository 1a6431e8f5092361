// The faulty backend plugin for tests: computes like eager, and injects chosen faults (a crash, an
// exception, a hang, wrong numbers, out of memory, a compile error) at chosen operators, one fault
// per operator. Two wrong-number faults model what `minify analyze` must tell apart: one that is
// wrong on some runs only (`nondeterministic`), and one that is wrong only where the operator's
// input comes from another chosen operator in the same compiled graph (`wrong-fused`, a fusion bug). `cuda-error` throws what LibTorch throws after a kernel's illegal memory access,
// without a GPU, so that the worker's retirement after CUDA errors is tested on every machine; the
// real faults, `cuda-illegal-address` and `cuda-assert`, launch broken kernels on the GPU holding
// the operator's output (faulty_cuda_kernels.h; only where the plugin was built with nvcc).
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <iterator>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <map>
#include <set>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include "common/expected.h"
#include "worker/backend.h"
#ifdef MINIFYD_FAULTY_CUDA
#include "tests/plugins/faulty_cuda_kernels.h"
#endif

namespace faulty {

using minifyd::Error;
using minifyd::ErrorKind;
using minifyd::Expected;
using minifyd::Graph;
using minifyd::make_error;
using minifyd::Node;
using minifyd::OpCode;
using minifyd::worker::Backend;
using minifyd::worker::BackendContext;
using minifyd::worker::BackendOptions;
using minifyd::worker::CompiledGraph;
using minifyd::worker::CompileResult;
using minifyd::worker::ConstantMap;
using minifyd::worker::EagerInterpreter;
using minifyd::worker::EagerOptions;
using minifyd::worker::EagerResult;
using minifyd::worker::FailureKind;
using minifyd::worker::NodeFailure;

enum class Fault {
  segfault, abort, throw_, hang, wrong, nondeterministic, wrong_fused, oom, compile_error, output_is_input, precise,
  cuda_error, cuda_illegal_address, cuda_assert,
};

const std::pair<const char*, Fault> fault_names[] = {
    {"segfault", Fault::segfault},
    {"abort", Fault::abort},
    {"throw", Fault::throw_},
    {"hang", Fault::hang},
    {"wrong", Fault::wrong},
    {"nondeterministic", Fault::nondeterministic},
    {"wrong-fused", Fault::wrong_fused},
    {"oom", Fault::oom},
    {"compile-error", Fault::compile_error},
    {"output-is-input", Fault::output_is_input},
    {"precise", Fault::precise},
    {"cuda-error", Fault::cuda_error},
    {"cuda-illegal-address", Fault::cuda_illegal_address},
    {"cuda-assert", Fault::cuda_assert},
};

// Which fault each operator gets, by node target, matched exactly.
struct Config {
  std::map<std::string, Fault> faults;
  // wrong-fused fires at a node one of whose inputs a node of one of these operators computes.
  std::set<std::string> fused_with;

  bool any(Fault fault) const {
    return std::any_of(faults.begin(), faults.end(), [&](const auto& entry) { return entry.second == fault; });
  }
  bool only(Fault fault) const {
    return std::all_of(faults.begin(), faults.end(), [&](const auto& entry) { return entry.second == fault; });
  }
};

constexpr std::string_view per_operator_prefix = "fault.";

std::string fault_list() {
  std::string text;
  for (const auto& [name, fault] : fault_names) text += (text.empty() ? "" : ", ") + std::string(name);
  return text;
}

std::string trimmed(const std::string& text) {
  std::size_t begin = text.find_first_not_of(" \t");
  if (begin == std::string::npos) return "";
  return text.substr(begin, text.find_last_not_of(" \t") - begin + 1);
}

Error refusal(std::string message) {
  return make_error(ErrorKind::invalid_input, "faulty backend: " + std::move(message));
}

Expected<Fault> parse_fault(const std::string& option, const std::string& name) {
  auto named = std::find_if(std::begin(fault_names), std::end(fault_names),
                            [&](const auto& entry) { return name == entry.first; });
  if (named == std::end(fault_names))
    return refusal("option '" + option + "': unknown fault '" + name + "' (" + fault_list() + ")");
  return named->second;
}

// Adds one (operator, fault) pair; `option` is the option that names the operator.
Expected<void> add_fault(Config& config, const std::string& option, const std::string& op, Fault fault) {
  if (op.empty()) return refusal("option '" + option + "' has an empty operator name");
  auto [entry, added] = config.faults.emplace(op, fault);
  if (!added && entry->second != fault) return refusal("option '" + option + "': operator '" + op + "' is given two faults");
  return {};
}

// The op/fault pair puts one fault at every operator of a comma-separated list; each
// fault.OPERATOR=FAULT adds one more pair. The worker reports a refusal when it creates the backend.
Expected<Config> parse_config(const BackendOptions& options) {
  Config config;
  std::optional<std::string> ops;
  std::optional<std::string> fault_name;
  for (const auto& [key, value] : options) {
    if (key == "op") {
      ops = value;
    } else if (key == "fault") {
      fault_name = value;
    } else if (key == "fused-with") {
      for (std::size_t start = 0; start <= value.size();) {
        std::size_t comma = std::min(value.find(',', start), value.size());
        if (std::string op = trimmed(value.substr(start, comma - start)); !op.empty()) config.fused_with.insert(op);
        start = comma + 1;
      }
    } else if (key.rfind(per_operator_prefix, 0) == 0) {
      auto fault = parse_fault(key, value);
      if (!fault) return fault.error();
      if (auto added = add_fault(config, key, trimmed(key.substr(per_operator_prefix.size())), *fault); !added)
        return added.error();
    } else {
      return refusal("unknown option '" + key + "' (options: op, fault, fault.OPERATOR, fused-with)");
    }
  }
  if (ops && !fault_name) return refusal("option 'op' needs option 'fault' (" + fault_list() + ")");
  if (fault_name) {
    auto fault = parse_fault("fault", *fault_name);
    if (!fault) return fault.error();
    std::string list = ops.value_or("aten::relu");
    for (std::size_t start = 0; start <= list.size();) {
      std::size_t comma = std::min(list.find(',', start), list.size());
      if (auto added = add_fault(config, "op", trimmed(list.substr(start, comma - start)), *fault); !added)
        return added.error();
      start = comma + 1;
    }
  }
  if (config.faults.empty())
    return refusal("option 'fault' or 'fault.OPERATOR' is required (" + fault_list() + ")");
  if (config.any(Fault::wrong_fused) != !config.fused_with.empty())
    return refusal(config.fused_with.empty() ? "fault 'wrong-fused' needs option 'fused-with' (the operators it fuses with)"
                                             : "option 'fused-with' applies to fault 'wrong-fused' only");
  if (config.any(Fault::precise) && !config.only(Fault::precise))
    return refusal("fault 'precise' computes the whole graph and combines with no other fault");
  return config;
}

// --- the faults that fire while a node of a chosen operator runs ---

void write_to_null() {
  // Volatile twice over, so the compiler neither proves the pointer null (and emits a trap
  // instruction, SIGILL) nor drops the store: this is a real invalid write, SIGSEGV.
  volatile int* volatile target = nullptr;
  *target = 1;
}

void hang_forever() {
  for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
}

// Makes the value clearly wrong in place (+1, or negation for bool), so that every later node
// and the graph's output see the wrong numbers.
void perturb(const c10::IValue& value) {
  if (value.isTensor()) {
    at::NoGradGuard no_grad;  // a result that requires grad may still be changed in place here
    const at::Tensor& tensor = value.toTensor();
    if (tensor.scalar_type() == at::kBool)
      tensor.logical_not_();
    else
      tensor.add_(1);
  } else if (value.isTuple()) {
    for (const c10::IValue& item : value.toTupleRef().elements()) perturb(item);
  } else if (value.isList()) {
    for (const c10::IValue& item : value.toListRef()) perturb(item);
  }
}

std::uint64_t address_space_in_use() {
  std::ifstream statm("/proc/self/statm");  // first field: the virtual size in pages
  std::uint64_t pages = 0;
  statm >> pages;
  if (!statm) throw std::runtime_error("faulty backend: cannot read /proc/self/statm for the oom fault");
  return pages * static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
}

// Caps this process's address space at its current size plus `headroom` while it lives, so that
// exhausting memory exhausts only that allowance and never the machine. Refuses (throws) rather
// than run uncapped.
class AddressSpaceCap {
 public:
  explicit AddressSpaceCap(std::uint64_t headroom) {
    if (getrlimit(RLIMIT_AS, &saved_) != 0) throw std::runtime_error("faulty backend: getrlimit(RLIMIT_AS) failed");
    rlimit capped = saved_;
    rlim_t cap = address_space_in_use() + headroom;
    if (capped.rlim_cur == RLIM_INFINITY || cap < capped.rlim_cur) capped.rlim_cur = cap;
    if (setrlimit(RLIMIT_AS, &capped) != 0) throw std::runtime_error("faulty backend: setrlimit(RLIMIT_AS) failed");
  }
  // Restores the limit so that the worker can still report the failure.
  ~AddressSpaceCap() { setrlimit(RLIMIT_AS, &saved_); }
  AddressSpaceCap(const AddressSpaceCap&) = delete;
  AddressSpaceCap& operator=(const AddressSpaceCap&) = delete;

 private:
  rlimit saved_{};
};

// Allocates until LibTorch's allocator fails and lets its out-of-memory error propagate, as a
// backend that runs out of memory would. The 128 MiB chunks leave the failed allocation well
// short of the cap, so the error itself still has memory to be built in.
void exhaust_memory() {
  constexpr std::uint64_t headroom = std::uint64_t{512} << 20;
  constexpr std::int64_t chunk = std::int64_t{128} << 20;
  AddressSpaceCap cap(headroom);
  std::vector<at::Tensor> hoard;  // destroyed before the cap is lifted
  // Bounded, in case an allocator that never maps memory up front ever meets the cap.
  for (std::uint64_t total = 0; total <= 2 * headroom; total += chunk) hoard.push_back(at::empty({chunk}, at::kByte));
  throw std::runtime_error("faulty backend: allocating " + std::to_string(2 * headroom) + " bytes never failed");
}

// Launches the broken kernel; it fails asynchronously, after the operator has returned.
void break_the_gpu(Fault fault, const Node& node, const c10::IValue& value) {
#ifdef MINIFYD_FAULTY_CUDA
  if (!value.isTensor() || !value.toTensor().is_cuda())
    throw std::runtime_error("faulty backend: " + node.target() + " at node '" + node.name() +
                             "' has no CUDA output to break the GPU with");
  if (fault == Fault::cuda_illegal_address) launch_illegal_address(value.toTensor().data_ptr());
  else launch_device_assert();
#else
  (void)fault;
  (void)value;
  throw std::runtime_error("faulty backend: built without CUDA, it cannot break a GPU at node '" + node.name() + "'");
#endif
}

void inject(Fault fault, const Node& node, const c10::IValue& value) {
  switch (fault) {
    case Fault::segfault: write_to_null(); break;
    case Fault::abort: std::abort();
    case Fault::throw_:
      throw std::runtime_error("faulty backend: injected exception in " + node.target() + " at node '" +
                               node.name() + "'");
    case Fault::cuda_error:
      throw std::runtime_error("CUDA error: an illegal memory access was encountered (reported by the faulty plugin in " +
                               node.target() + ")");
    case Fault::cuda_illegal_address:
    case Fault::cuda_assert: break_the_gpu(fault, node, value); break;
    case Fault::hang: hang_forever(); break;
    case Fault::wrong:
    case Fault::nondeterministic:  // FaultyGraph drops it on the runs where it is right
    case Fault::wrong_fused: perturb(value); break;  // faulty_nodes_of kept only the fused nodes
    case Fault::oom: exhaust_memory(); break;
    case Fault::compile_error:
    case Fault::output_is_input:
    case Fault::precise: break;  // these act at compile time or on the whole graph
  }
}

// --- compile-time faults ---

NodeFailure compile_failure(const Node& node, std::string message) {
  NodeFailure failure;
  failure.kind = FailureKind::exception;
  failure.node = node.name();
  if (node.op() == OpCode::call_function) failure.op = node.target();
  failure.exception_type = "faulty::CompileError";
  failure.message = "faulty backend: " + std::move(message);
  return failure;
}

// The graph's nodes whose operator has a fault.
using FaultyNodes = std::unordered_map<const Node*, Fault>;

// Whether a node of one of `operators` computes one of the node's inputs.
bool fed_by(const Node& node, const std::set<std::string>& operators) {
  bool fed = false;
  auto check = [&](Node* input) { fed = fed || (input->op() == OpCode::call_function && operators.count(input->target())); };
  for (const minifyd::Value& arg : node.args()) minifyd::for_each_node_ref(arg, check);
  for (const auto& [name, arg] : node.kwargs()) minifyd::for_each_node_ref(arg, check);
  return fed;
}

FaultyNodes faulty_nodes_of(const Graph& graph, const Config& config) {
  FaultyNodes nodes;
  for (const Node* node : graph.nodes()) {
    if (node->op() != OpCode::call_function) continue;
    auto found = config.faults.find(node->target());
    if (found == config.faults.end()) continue;
    if (found->second == Fault::wrong_fused && !fed_by(*node, config.fused_with)) continue;
    nodes.emplace(node, found->second);
  }
  return nodes;
}

// The first node, in graph order, whose fault is compile-error.
std::optional<NodeFailure> refuse_ops(const Graph& graph, const FaultyNodes& faulty_nodes) {
  for (const Node* node : graph.nodes()) {
    auto found = faulty_nodes.find(node);
    if (found != faulty_nodes.end() && found->second == Fault::compile_error)
      return compile_failure(*node, "cannot compile " + node->target() + " (node '" + node->name() + "')");
  }
  return std::nullopt;
}

std::optional<NodeFailure> refuse_input_outputs(const Graph& graph) {
  const Node* output = graph.output();
  if (!output) return std::nullopt;  // the interpreter reports the missing output
  const Node* input = nullptr;
  for (const minifyd::Value& arg : output->args())
    minifyd::for_each_node_ref(arg, [&](Node* node) {
      if (!input && node->op() == OpCode::placeholder) input = node;
    });
  if (!input) return std::nullopt;
  return compile_failure(*output, "an output of the graph is its input '" + input->name() + "'");
}

// --- compiled graphs ---

// Runs the eager interpreter, injecting each faulty node's fault when it has run.
class FaultyGraph : public CompiledGraph {
 public:
  FaultyGraph(const Graph& graph, const ConstantMap& constants, const EagerOptions& options, FaultyNodes faulty_nodes)
      : interpreter_(graph, options), constants_(constants), faulty_nodes_(std::move(faulty_nodes)) {}

  const NodeFailure* preparation_failure() const { return interpreter_.preparation_failure(); }

  EagerResult run(const std::vector<c10::IValue>& inputs) override {
    // nondeterministic: wrong on the 1st, 3rd, ... run of this compiled graph, right on the others.
    bool odd_run = runs_++ % 2 == 0;
    return interpreter_.run(inputs, constants_, [this, odd_run](const Node& node, const c10::IValue& value) {
      auto found = faulty_nodes_.find(&node);
      if (found == faulty_nodes_.end() || (found->second == Fault::nondeterministic && !odd_run)) return;
      inject(found->second, node, value);
    });
  }

 private:
  EagerInterpreter interpreter_;
  const ConstantMap& constants_;
  FaultyNodes faulty_nodes_;
  std::atomic<std::uint64_t> runs_{0};
};

// As the seeds' cast_to_fp64: floating tensors become float64, everything else is left alone.
// Non-floating tensors are copied too, so that in-place ops in the eager run leave them be.
c10::IValue to_fp64(const c10::IValue& value) {
  if (!value.isTensor()) return value;
  const at::Tensor& tensor = value.toTensor();
  return tensor.is_floating_point() ? tensor.to(at::kDouble) : tensor.clone();
}

// `precise` with every tensor cast to the dtype of its counterpart in `eager`.
c10::IValue cast_like(const c10::IValue& precise, const c10::IValue& eager) {
  if (precise.isTensor() && eager.isTensor()) return precise.toTensor().to(eager.toTensor().scalar_type());
  if (precise.isTuple() && eager.isTuple()) {
    const auto& items = precise.toTupleRef().elements();
    const auto& references = eager.toTupleRef().elements();
    std::vector<c10::IValue> cast;
    for (std::size_t i = 0; i < items.size() && i < references.size(); ++i) cast.push_back(cast_like(items[i], references[i]));
    return c10::ivalue::Tuple::create(std::move(cast));
  }
  if (precise.isList() && eager.isList()) {
    c10::List<c10::IValue> cast = precise.toList().copy();
    c10::ArrayRef<c10::IValue> references = eager.toListRef();
    for (std::size_t i = 0; i < cast.size() && i < references.size(); ++i) cast.set(i, cast_like(cast.get(i), references[i]));
    return cast;
  }
  return precise;
}

// Computes the whole graph in float64 and returns eager's dtypes: more accurate than eager, which
// `accuracy` must tolerate and `strict-accuracy` must not. Eager runs too, only to learn the
// output dtypes (a graph may cast on its own, so the inputs' dtypes do not tell).
class PreciseGraph : public CompiledGraph {
 public:
  PreciseGraph(const Graph& graph, const ConstantMap& constants, EagerOptions options)
      : eager_(graph, options), fp64_(graph, with_fp64(options)), constants_(constants) {
    for (const auto& [name, tensor] : constants) fp64_constants_.emplace(name, to_fp64(tensor).toTensor());
  }

  const NodeFailure* preparation_failure() const { return eager_.preparation_failure(); }

  EagerResult run(const std::vector<c10::IValue>& inputs) override {
    std::vector<c10::IValue> fp64_inputs;
    for (const c10::IValue& input : inputs) fp64_inputs.push_back(to_fp64(input));
    EagerResult eager = eager_.run(inputs, constants_);
    if (!eager.ok()) return eager;
    EagerResult precise = fp64_.run(fp64_inputs, fp64_constants_);
    if (precise.ok()) precise.output = cast_like(precise.output, eager.output);
    return precise;
  }

 private:
  static EagerOptions with_fp64(EagerOptions options) {
    options.fp64_reference = true;
    return options;
  }

  EagerInterpreter eager_;
  EagerInterpreter fp64_;
  const ConstantMap& constants_;
  ConstantMap fp64_constants_;
};

template <class Compiled>
CompileResult prepared(std::unique_ptr<Compiled> compiled) {
  if (const NodeFailure* failure = compiled->preparation_failure()) return {nullptr, *failure};
  return {std::move(compiled), std::nullopt};
}

class FaultyBackend : public Backend {
 public:
  explicit FaultyBackend(Config config) : config_(std::move(config)) {}

  std::string name() const override { return "faulty"; }

  CompileResult compile(const Graph& graph, const ConstantMap& constants, const BackendContext& context) override {
    FaultyNodes faulty_nodes = faulty_nodes_of(graph, config_);
    std::optional<NodeFailure> refused = refuse_ops(graph, faulty_nodes);
    if (!refused && config_.any(Fault::output_is_input)) refused = refuse_input_outputs(graph);
    if (refused) return {nullptr, std::move(refused)};
    if (config_.any(Fault::precise))
      return prepared(std::make_unique<PreciseGraph>(graph, constants, context.eager_options));
    return prepared(std::make_unique<FaultyGraph>(graph, constants, context.eager_options, std::move(faulty_nodes)));
  }

 private:
  Config config_;
};

}  // namespace faulty

// A build that claims another ABI version, to test the worker's refusal, defines this.
#ifndef MINIFYD_FAULTY_ABI_VERSION
#define MINIFYD_FAULTY_ABI_VERSION minifyd::worker::minifyd_backend_abi_version
#endif

extern "C" int minifyd_backend_abi(void) { return MINIFYD_FAULTY_ABI_VERSION; }

extern "C" minifyd::worker::Backend* minifyd_create_backend(const minifyd::worker::BackendOptions* options,
                                                            std::string* error) {
  try {
    minifyd::Expected<faulty::Config> config = faulty::parse_config(*options);
    if (!config) {
      *error = config.error().message;
      return nullptr;
    }
    return new faulty::FaultyBackend(std::move(*config));
  } catch (const std::exception& thrown) {  // nothing may escape the plugin interface
    *error = std::string("faulty backend: ") + thrown.what();
    return nullptr;
  }
}
