// Lowering a graph to a torch::jit::Graph, node by node.
#include "worker/backends/torchscript_lowering.h"

#include <sstream>
#include <typeinfo>
#include <unordered_map>
#include <utility>

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/util/Type.h>
#include <torch/csrc/jit/frontend/source_range.h>

#include "worker/argument_binding.h"
#include "worker/graph_values.h"
#include "worker/symint_arithmetic.h"
#include "worker/torch_compat.h"

namespace minifyd::worker {
namespace {

namespace jit = torch::jit;

std::string overload_name(const c10::FunctionSchema& schema) {
  return schema.overload_name().empty() ? schema.name() : schema.name() + "." + schema.overload_name();
}

// What a lowered node produced: one value (a tensor, a list, a number), or one per element of
// the tuple it returns, read through getitem.
struct LoweredNode {
  std::vector<jit::Value*> outputs;
  bool is_tuple = false;
};

class Lowering {
 public:
  Lowering(const ConstantMap& constants, const BackendContext& context)
      : constants_(constants), options_(context.eager_options), inputs_(context.inputs) {}

  // Fills `lowered` or says which node could not be lowered and why.
  std::optional<NodeFailure> lower(const Graph& graph, LoweredGraph& lowered) {
    lowered_ = &lowered;
    for (const Node* node : graph.nodes()) {
      std::optional<NodeFailure> failure;
      try {
        switch (node->op()) {
          case OpCode::placeholder: failure = lower_placeholder(*node); break;
          case OpCode::get_attr: failure = lower_constant(*node); break;
          case OpCode::call_function:
            if (node->target() == getitem_target) failure = lower_getitem(*node);
            else if (const SymIntArithmetic* arithmetic = symint_arithmetic(node->target()))
              failure = lower_arithmetic(*node, *arithmetic);
            else failure = lower_call(*node);
            break;
          case OpCode::output:
            failure = lower_output(*node);
            if (!failure) lowered.graph->lint();
            return failure;
        }
      } catch (const std::exception& error) {
        return exception_failure(node, &error);
      }
      if (failure) return failure;
    }
    NodeFailure failure;
    failure.kind = FailureKind::invalid_graph;
    failure.message = "the graph has no output node";
    return failure;
  }

 private:
  std::optional<NodeFailure> lower_placeholder(const Node& node) {
    std::size_t index = lowered_->placeholder_positions.size();
    bool symint = index < inputs_.size() && std::holds_alternative<SymIntInput>(inputs_[index]);
    lowered_->placeholder_positions.push_back(lowered_->stack.size());
    lowered_->stack.emplace_back();
    c10::TypePtr type = symint ? c10::TypePtr(c10::IntType::get()) : c10::TypePtr(c10::TensorType::get());
    values_[&node] = {{add_input(node.name(), std::move(type))}, false};
    return std::nullopt;
  }

  // Constants are graph inputs rather than prim::Constant tensors: TorchScript refuses constants
  // that require grad, and the profiling executor records their exact types as it does for
  // placeholders, so the fusers see them as the real tensors they are.
  std::optional<NodeFailure> lower_constant(const Node& node) {
    auto found = constants_.find(node.target());
    if (found == constants_.end())
      return failure_at(node, FailureKind::bad_input, "no constant named '" + node.target() + "' was given");
    auto [input, added] = constant_inputs_.try_emplace(node.target(), nullptr);
    if (added) {
      input->second = add_input(node.name(), c10::TensorType::get());
      lowered_->stack.emplace_back(found->second);
    }
    values_[&node] = {{input->second}, false};
    return std::nullopt;
  }

  jit::Value* add_input(const std::string& name, c10::TypePtr type) {
    jit::Value* input = lowered_->graph->addInput(name);
    input->setType(std::move(type));
    return input;
  }

  // SymInt arithmetic becomes TorchScript's int operator of the same Python semantics.
  std::optional<NodeFailure> lower_arithmetic(const Node& node, const SymIntArithmetic& arithmetic) {
    const std::vector<Value>& args = node.args();
    if (args.size() != arithmetic.arity || !node.kwargs().empty())
      return failure_at(node, FailureKind::bad_argument,
                        node.target() + " takes " + std::to_string(arithmetic.arity) + " positional ints");
    std::vector<jit::Value*> operands;
    for (std::size_t i = 0; i < args.size(); ++i) {
      auto operand = argument(args[i], c10::IntType::get(), c10::IntType::get(), std::nullopt);
      if (operand && !(*operand)->type()->isSubtypeOf(*c10::IntType::get()))
        operand = make_error(ErrorKind::invalid_input, "expects int, got " + (*operand)->type()->str());
      if (!operand) return failure_at(node, FailureKind::bad_argument, operand.error().message, i == 0 ? "a" : "b");
      operands.push_back(*operand);
    }
    std::string_view schema = arithmetic.torchscript_schema;
    jit::Graph& graph = *lowered_->graph;
    jit::Node* call =
        graph.create(c10::Symbol::fromQualString(std::string(schema.substr(0, schema.find('.')))), operands, 1);
    call->output()->setType(c10::IntType::get());
    graph.insertNode(call)->setSourceRange(source_range(node));
    const c10::FunctionSchema* chosen = call->maybeSchema();
    if (!chosen || overload_name(*chosen) != schema)
      return failure_at(node, FailureKind::bad_argument,
                        "TorchScript resolves this node to " + (chosen ? overload_name(*chosen) : "no operator") +
                            " instead of " + std::string(schema));
    values_[&node] = {{call->output()}, false};
    return std::nullopt;
  }

  std::optional<NodeFailure> lower_call(const Node& node) {
    auto resolved = resolve_call(node);
    if (auto* failure = std::get_if<NodeFailure>(&resolved)) return *failure;
    const auto& [handle, given] = std::get<ResolvedCall>(resolved);
    const c10::FunctionSchema& schema = handle.schema();
    const std::vector<c10::Argument>& parameters = schema.arguments();
    std::vector<jit::Value*> inputs;
    for (std::size_t i = 0; i < parameters.size(); ++i) {
      const c10::Argument& parameter = parameters[i];
      if (!given[i]) {
        if (!parameter.default_value())
          return failure_at(node, FailureKind::bad_argument, "missing required argument", parameter.name());
        inputs.push_back(constant(*parameter.default_value()));
        continue;
      }
      try {
        auto input = argument(*given[i], parameter.real_type(), parameter.type(), to_std_optional(parameter.N()));
        if (!input) return failure_at(node, FailureKind::bad_argument, input.error().message, parameter.name());
        inputs.push_back(*input);
      } catch (const std::exception& error) {
        NodeFailure failure = exception_failure(&node, &error);
        failure.kind = FailureKind::bad_argument;
        failure.argument = parameter.name();
        return failure;
      }
    }

    jit::Graph& graph = *lowered_->graph;
    const std::vector<c10::Argument>& returns = schema.returns();
    jit::Node* call = graph.create(c10::Symbol::fromQualString(schema.name()), inputs, returns.size());
    for (std::size_t i = 0; i < returns.size(); ++i) {
      if (returns[i].type()->hasFreeVariables())
        return failure_at(node, FailureKind::unknown_operator,
                          "returns " + returns[i].type()->str() + ", a type variable TorchScript cannot lower here");
      call->output(i)->setType(returns[i].type());
    }
    graph.insertNode(call)->setSourceRange(source_range(node));
    // The JIT picks the operator that runs a node by matching its inputs' types against every
    // overload of the symbol; unless that choice is this overload, the node would run another one.
    const c10::FunctionSchema* chosen = call->maybeSchema();
    if (!chosen || overload_name(*chosen) != overload_name(schema))
      return failure_at(node, FailureKind::bad_argument, mismatch_message(*call, schema, chosen));

    LoweredNode& lowered = values_[&node];
    lowered.is_tuple = returns.size() > 1;
    lowered.outputs.assign(call->outputs().begin(), call->outputs().end());
    return std::nullopt;
  }

  static std::string mismatch_message(const jit::Node& call, const c10::FunctionSchema& schema,
                                      const c10::FunctionSchema* chosen) {
    std::ostringstream text;
    text << "TorchScript " << (chosen ? "resolves this node to " + overload_name(*chosen) : "matches no overload")
         << " instead of " << overload_name(schema) << ": its inputs are (";
    for (std::size_t i = 0; i < call.inputs().size(); ++i)
      text << (i ? ", " : "") << call.inputs()[i]->type()->str();
    text << ") and the schema is " << schema;
    return text.str();
  }

  std::optional<NodeFailure> lower_getitem(const Node& node) {
    const std::vector<Value>& args = node.args();
    if (args.size() != 2 || !node.kwargs().empty() || !args[0].is<NodeRef>() || !args[1].is<std::int64_t>())
      return failure_at(node, FailureKind::bad_argument, "getitem takes a node and an int");
    auto source = values_.find(args[0].as<NodeRef>().node);
    if (source == values_.end())
      return failure_at(node, FailureKind::bad_argument, "reads a node that has no value before this node");
    std::int64_t item = args[1].as<std::int64_t>();
    if (source->second.is_tuple) {
      const std::vector<jit::Value*>& outputs = source->second.outputs;
      auto size = static_cast<std::int64_t>(outputs.size());
      std::int64_t index = item < 0 ? item + size : item;  // negative from the end, as in Python
      if (index < 0 || index >= size)
        return failure_at(node, FailureKind::bad_argument,
                          "getitem index " + std::to_string(item) + " is out of range for " +
                              std::to_string(size) + " values");
      values_[&node] = {{outputs[static_cast<std::size_t>(index)]}, false};
      return std::nullopt;
    }
    jit::Value* list = source->second.outputs.empty() ? nullptr : source->second.outputs.front();
    if (!list || list->type()->kind() != c10::TypeKind::ListType)
      return failure_at(node, FailureKind::bad_argument, "getitem of a node that is neither a tuple nor a list");
    // Tensor[] results (split, unbind) have a length only known at run time, so no ListUnpack.
    jit::Graph& graph = *lowered_->graph;
    jit::Node* read = graph.create(c10::Symbol::fromQualString("aten::__getitem__"), {list, constant(item)}, 1);
    read->output()->setType(list->type()->expectRef<c10::ListType>().getElementType());
    graph.insertNode(read)->setSourceRange(source_range(node));
    values_[&node] = {{read->output()}, false};
    return std::nullopt;
  }

  std::optional<NodeFailure> lower_output(const Node& node) {
    if (node.args().size() != 1)
      return failure_at(node, FailureKind::invalid_graph, "the output node takes exactly one value");
    auto value = output_value(node.args()[0]);
    if (!value) return failure_at(node, FailureKind::bad_argument, value.error().message);
    lowered_->graph->registerOutput(*value);
    return std::nullopt;
  }

  // The interpreter's traceback of a failure quotes the failing node's source: its name alone,
  // so that the message stays the same when the search rewrites the node's arguments.
  static jit::SourceRange source_range(const Node& node) {
    return jit::SourceRange(std::make_shared<jit::Source>(node.name() + "\n"), 0, node.name().size());
  }

  jit::Value* constant(const c10::IValue& value) { return lowered_->graph->insertConstant(value); }

  // A node's value as a whole: a tuple-returning node is a tuple only where the output nests it.
  Expected<jit::Value*> node_value(const Node& node, bool tuple_allowed) {
    auto found = values_.find(&node);
    if (found == values_.end())
      return make_error(ErrorKind::invalid_input,
                        "refers to node '" + node.name() + "', which has no value before this node");
    const LoweredNode& lowered = found->second;
    if (lowered.outputs.empty()) return constant(c10::IValue());
    if (!lowered.is_tuple) return lowered.outputs.front();
    if (!tuple_allowed)
      return make_error(ErrorKind::invalid_input, "node '" + node.name() + "' returns " +
                                                      std::to_string(lowered.outputs.size()) +
                                                      " values; read one with getitem");
    return lowered_->graph->insertNode(lowered_->graph->createTuple(lowered.outputs))->output();
  }

  // The argument as bind_argument() binds it, as TorchScript graphs hold it (enums as ints).
  Expected<jit::Value*> argument(const Value& value, const c10::TypePtr& real, const c10::TypePtr& fake,
                                 std::optional<std::int32_t> size) {
    auto bound = bind_argument(value, real, fake, size, options_, EnumEncoding::as_int);
    if (!bound) return bound.error();
    return lower_argument(*bound);
  }

  Expected<jit::Value*> lower_argument(const BoundArgument& bound) {
    switch (bound.source) {
      case BoundArgument::Source::node:
        return node_value(*bound.node, false);
      case BoundArgument::Source::constant: {
        jit::Value* lowered = constant(bound.constant);
        // TorchScript's Scalar has no bool: a bool passed to one is typed as the Scalar holding it.
        if (bound.constant.isBool() && bound.type->kind() == c10::TypeKind::NumberType)
          lowered->setType(c10::NumberType::get());
        return lowered;
      }
      case BoundArgument::Source::list:
        break;
    }
    std::vector<jit::Value*> items;
    for (std::size_t i = 0; i < bound.items.size(); ++i) {
      std::string context = "[" + std::to_string(i) + "]";
      auto item = lower_argument(bound.items[i]);
      if (!item) return item.error().with_context(context);
      if (!(*item)->type()->isSubtypeOf(*bound.type))
        return make_error(ErrorKind::invalid_input,
                          context + ": expects " + bound.type->str() + ", got " + (*item)->type()->str());
      items.push_back(*item);
    }
    return lowered_->graph->insertNode(lowered_->graph->createList(bound.type, items))->output();
  }

  // The graph's result, nested as written: tuples become TupleConstruct, lists ListConstruct.
  Expected<jit::Value*> output_value(const Value& value) {
    if (value.is<NodeRef>()) return node_value(*value.as<NodeRef>().node, true);
    if (!value.is<ListValue>()) {
      auto leaf = leaf_ivalue(value, options_, EnumEncoding::as_int);
      if (!leaf) return leaf.error();
      return constant(*leaf);
    }
    std::vector<jit::Value*> items;
    std::vector<c10::TypePtr> types;
    for (const Value& item : value.as<ListValue>().items) {
      auto lowered = output_value(item);
      if (!lowered) return lowered.error();
      items.push_back(*lowered);
      types.push_back((*lowered)->type());
    }
    jit::Graph& graph = *lowered_->graph;
    if (value.as<ListValue>().is_tuple) return graph.insertNode(graph.createTuple(items))->output();
    std::ostringstream why_not;
    auto element = to_std_optional(c10::unifyTypeList(types, why_not, /*default_to_union=*/true));
    return graph.insertNode(graph.createList(element.value_or(c10::AnyType::get()), items))->output();
  }

  const ConstantMap& constants_;
  const EagerOptions& options_;
  const std::vector<GraphInput>& inputs_;
  LoweredGraph* lowered_ = nullptr;
  std::unordered_map<const Node*, LoweredNode> values_;
  std::unordered_map<std::string, jit::Value*> constant_inputs_;
};

}  // namespace

std::optional<NodeFailure> lower_to_jit(const Graph& graph, const ConstantMap& constants, const BackendContext& context,
                                        LoweredGraph& lowered) {
  return Lowering(constants, context).lower(graph, lowered);
}

}  // namespace minifyd::worker
