// Exposing and measuring intermediate values.
#include "worker/value_analysis.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cstring>

#include "worker/accuracy.h"
#include "worker/graph_values.h"
#include "worker/torch_compat.h"

namespace minifyd::worker {
namespace {

// Element i of an exposed graph's output tuple (a lowering may return a list instead).
c10::IValue element(const c10::IValue& output, std::size_t i) {
  if (output.isTuple()) return output.toTupleRef().elements().at(i);
  if (output.isList()) return output.toListRef().at(i);
  return output;
}

bool tensor_bits_equal(const at::Tensor& a, const at::Tensor& b) {
  if (a.scalar_type() != b.scalar_type() || a.sizes() != b.sizes()) return false;
  at::Tensor x = a.detach().cpu().contiguous();
  at::Tensor y = b.detach().cpu().contiguous();
  return std::memcmp(x.data_ptr(), y.data_ptr(), x.numel() * x.element_size()) == 0;
}

// Whether a measurement's new leaf is worse than the one it holds: a divergence over none, then
// the larger error against eager.
bool worse(const LeafComparison& leaf, const protocol::ValueMeasurement& held) {
  if (!held.measured) return true;
  if (!leaf.passes != held.diverges) return !leaf.passes;
  return leaf.report.max_abs_error > held.max_abs_error;
}

protocol::ValueMeasurement measure(const std::string& node, const c10::IValue& eager, const c10::IValue& compiled,
                                   const c10::IValue* fp64) {
  protocol::ValueMeasurement measurement;
  measurement.node = node;
  std::vector<c10::IValue> refs = flatten_output(eager);
  std::vector<c10::IValue> results = flatten_output(compiled);
  std::vector<c10::IValue> fp64s = fp64 ? flatten_output(*fp64) : std::vector<c10::IValue>();
  if (refs.size() != results.size()) {
    measurement.diverges = true;
    measurement.note = "the compiled value has " + std::to_string(results.size()) + " parts, eager's " +
                       std::to_string(refs.size());
    return measurement;
  }
  for (std::size_t i = 0; i < refs.size(); ++i) {
    if (!refs[i].isTensor()) continue;
    const c10::IValue* reference = i < fp64s.size() && fp64s[i].isTensor() ? &fp64s[i] : nullptr;
    LeafComparison leaf = compare_leaf(refs[i], results[i], reference, AccuracyOptions{});
    if (!worse(leaf, measurement)) continue;
    const at::Tensor& tensor = refs[i].toTensor();
    auto dtype = to_dtype(tensor.scalar_type());
    measurement.dtype = dtype ? to_string(*dtype) : c10::toString(tensor.scalar_type());
    measurement.shape = tensor.sizes().vec();
    measurement.measured = true;
    measurement.diverges = !leaf.passes;
    measurement.note = leaf.detail;
    measurement.max_abs_error = leaf.report.max_abs_error;
    measurement.compiled = leaf.compiled_vs_fp64;
    measurement.eager = leaf.eager_vs_fp64;
  }
  if (!measurement.measured && measurement.note.empty()) measurement.note = "not a tensor";
  return measurement;
}

// Whether `user` writes to `value` in place (an argument its schema marks as written, such as
// relu_'s self): the value read at the end of the run would then not be the one `value` computed.
bool writes_to(const Node& user, const Node& value) {
  if (user.op() != OpCode::call_function) return false;
  auto resolved = resolve_call(user);
  auto* call = std::get_if<ResolvedCall>(&resolved);
  if (call == nullptr) return false;
  const auto& arguments = call->op.schema().arguments();
  for (std::size_t i = 0; i < call->given.size() && i < arguments.size(); ++i) {
    const auto* alias = arguments[i].alias_info();
    if (call->given[i] == nullptr || alias == nullptr || !alias->isWrite()) continue;
    bool reads = false;
    for_each_node_ref(*call->given[i], [&](Node* node) { reads = reads || node == &value; });
    if (reads) return true;
  }
  return false;
}

// The node whose value stands for `node` at the end of the run: a copy made right after it when a
// later operator writes to it in place.
Expected<Node*> preserved_node(Graph& graph, Node* node) {
  std::vector<Node*> users = node->users();
  if (std::none_of(users.begin(), users.end(), [&](const Node* user) { return writes_to(*user, *node); })) return node;
  std::vector<Node*> nodes = graph.nodes();
  Node* next = nodes.at(graph.index_of(node) + 1);
  return graph.create_node(OpCode::call_function, graph.unique_name(node->name() + "_value"), "aten::clone",
                           {NodeRef{node}}, {}, next);
}

bool is_getitem(const Node* node) { return node->op() == OpCode::call_function && node->target() == getitem_target; }

// The value that stands for `node`: its own, or for a tuple-valued node (one read through getitem,
// such as native_batch_norm's), the tuple of its getitems' values, each kept from later writes.
Expected<Value> preserved(Graph& graph, Node* node) {
  std::vector<Node*> parts;
  for (Node* user : node->users())
    if (is_getitem(user)) parts.push_back(user);
  if (parts.empty()) {
    auto kept = preserved_node(graph, node);
    if (!kept) return kept.error();
    return Value(NodeRef{*kept});
  }
  ListValue tuple{{}, true};
  for (Node* part : parts) {
    auto kept = preserved_node(graph, part);
    if (!kept) return kept.error();
    tuple.items.push_back(NodeRef{*kept});
  }
  return Value(std::move(tuple));
}

}  // namespace

Expected<Graph> expose_values(const Graph& graph, const std::vector<std::string>& nodes) {
  Graph exposed = graph.clone();
  ListValue returned{{}, true};
  for (const std::string& name : nodes) {
    Node* node = exposed.find(name);
    if (node == nullptr) return make_error(ErrorKind::invalid_input, "analyze: the graph has no node '" + name + "'");
    if (node->op() != OpCode::call_function)
      return make_error(ErrorKind::invalid_input, "analyze: node '" + name + "' is no call_function node");
    auto kept = preserved(exposed, node);
    if (!kept) return kept.error().with_context("analyze: copying node '" + name + "'");
    returned.items.push_back(std::move(*kept));
  }
  Node* output = exposed.output();
  if (output == nullptr) return make_error(ErrorKind::invalid_input, "analyze: the graph has no output node");
  exposed.set_args(output, {std::move(returned)});
  return exposed;
}

std::vector<protocol::ValueMeasurement> measure_values(const std::vector<std::string>& nodes, const ExposedRuns& runs) {
  std::vector<protocol::ValueMeasurement> measurements;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    c10::IValue fp64 = runs.fp64 ? element(*runs.fp64, i) : c10::IValue();
    protocol::ValueMeasurement measurement =
        measure(nodes[i], element(runs.eager, i), element(runs.compiled, i), runs.fp64 ? &fp64 : nullptr);
    measurement.compiled_deterministic = bitwise_equal(element(runs.compiled, i), element(runs.compiled_again, i));
    if (runs.fp64 && runs.fp64_again)
      measurement.fp64_deterministic = bitwise_equal(fp64, element(*runs.fp64_again, i));
    measurements.push_back(std::move(measurement));
  }
  return measurements;
}

bool bitwise_equal(const c10::IValue& a, const c10::IValue& b) {
  std::vector<c10::IValue> left = flatten_output(a);
  std::vector<c10::IValue> right = flatten_output(b);
  if (left.size() != right.size()) return false;
  for (std::size_t i = 0; i < left.size(); ++i) {
    if (left[i].isTensor() != right[i].isTensor()) return false;
    if (left[i].isTensor() ? !tensor_bits_equal(left[i].toTensor(), right[i].toTensor()) : !(left[i] == right[i]))
      return false;
  }
  return true;
}

}  // namespace minifyd::worker
