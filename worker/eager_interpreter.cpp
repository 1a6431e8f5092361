// Binds graph values to operator schemas once, then runs the bound program node by node.
#include "worker/eager_interpreter.h"

#include <sstream>
#include <typeinfo>
#include <utility>

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/function_schema.h>
#include <c10/util/Type.h>

#include "worker/argument_binding.h"
#include "worker/graph_values.h"
#include "worker/symint_arithmetic.h"
#include "worker/torch_compat.h"

namespace minifyd::worker {

namespace {

// What run() builds an operator argument or the graph's output from.
struct ValueTemplate {
  enum class Source { constant, node, list, tuple };
  Source source = Source::constant;
  c10::IValue constant;
  std::size_t slot = 0;  // node: the step whose value it is
  // node: the schema type the value must fit (null for the output, which takes anything);
  // list: the element type of the list to build.
  c10::TypePtr type;
  std::vector<ValueTemplate> items;  // list, tuple
};

struct ArgumentBinding {
  std::string name;
  ValueTemplate value;
};

// One per node before the output; step i writes slot i.
struct Step {
  enum class Kind { placeholder, constant, getitem, call, arithmetic };
  Kind kind = Kind::call;
  const Node* node = nullptr;
  std::size_t input = 0;   // placeholder: index into the inputs
  std::size_t source = 0;  // getitem: the slot read
  std::int64_t item = 0;   // getitem: the index read
  std::optional<c10::OperatorHandle> op;
  const SymIntArithmetic* arithmetic = nullptr;
  std::vector<ArgumentBinding> arguments;  // call: one per schema argument, in schema order; arithmetic: its ints
  std::size_t returns = 0;
  // Slots whose last reader is this step: dropping them keeps peak memory near eager PyTorch's.
  std::vector<std::size_t> release;
};

using Slots = std::unordered_map<const Node*, std::size_t>;

ValueTemplate constant_template(c10::IValue value) {
  ValueTemplate bound;
  bound.constant = std::move(value);
  return bound;
}

// Turns graph values into templates: typed for operator arguments, untyped for the output.
class Binder {
 public:
  Binder(const Slots& slots, const EagerOptions& options) : slots_(slots), options_(options) {}

  // The argument as bind_argument() binds it for the boxed kernels (enums typed).
  Expected<ValueTemplate> argument(const Value& value, const c10::TypePtr& real, const c10::TypePtr& fake,
                                   std::optional<std::int32_t> size) const {
    auto bound = bind_argument(value, real, fake, size, options_, EnumEncoding::typed);
    if (!bound) return bound.error();
    return from_bound(*bound);
  }

  Expected<ValueTemplate> output(const Value& value) const {
    if (value.is<NodeRef>()) return node(value.as<NodeRef>().node, c10::TypePtr());
    if (!value.is<ListValue>()) {
      auto leaf = leaf_ivalue(value, options_, EnumEncoding::typed);
      if (!leaf) return leaf.error();
      return constant_template(std::move(*leaf));
    }
    ValueTemplate bound;
    bound.source =
        value.as<ListValue>().is_tuple ? ValueTemplate::Source::tuple : ValueTemplate::Source::list;
    bound.type = c10::AnyType::get();
    for (const Value& item : value.as<ListValue>().items) {
      auto bound_item = output(item);
      if (!bound_item) return bound_item.error();
      bound.items.push_back(std::move(*bound_item));
    }
    return bound;
  }

 private:
  Expected<ValueTemplate> node(const Node* node, c10::TypePtr type) const {
    auto found = slots_.find(node);
    if (found == slots_.end())
      return make_error(ErrorKind::invalid_input,
                        "refers to node '" + node->name() + "', which has no value before this node");
    ValueTemplate bound;
    bound.source = ValueTemplate::Source::node;
    bound.slot = found->second;
    bound.type = std::move(type);
    return bound;
  }

  // A list whose items are all constants is built once, here, rather than at every run.
  Expected<ValueTemplate> from_bound(const BoundArgument& bound) const {
    if (bound.source == BoundArgument::Source::constant) return constant_template(bound.constant);
    if (bound.source == BoundArgument::Source::node) return node(bound.node, bound.type);
    ValueTemplate list;
    list.source = ValueTemplate::Source::list;
    list.type = bound.type;
    bool all_constant = true;
    for (std::size_t i = 0; i < bound.items.size(); ++i) {
      auto item = from_bound(bound.items[i]);
      if (!item) return item.error().with_context("[" + std::to_string(i) + "]");
      all_constant = all_constant && item->source == ValueTemplate::Source::constant;
      list.items.push_back(std::move(*item));
    }
    if (!all_constant) return list;
    std::vector<c10::IValue> constants;
    for (ValueTemplate& item : list.items) constants.push_back(std::move(item.constant));
    return constant_template(make_list(bound.type, std::move(constants)));
  }

  const Slots& slots_;
  const EagerOptions& options_;
};

// Builds a template's value from the slots; fails if a node's value does not fit its parameter.
Expected<c10::IValue> materialize(const ValueTemplate& bound, const std::vector<c10::IValue>& slots) {
  switch (bound.source) {
    case ValueTemplate::Source::constant:
      return bound.constant;
    case ValueTemplate::Source::node: {
      const c10::IValue& value = slots[bound.slot];
      if (!bound.type) return value;
      auto coerced = coerce(value, *bound.type);
      if (!coerced)
        return make_error(ErrorKind::invalid_input,
                          "expects " + bound.type->str() + ", got " + value.tagKind());
      return std::move(*coerced);
    }
    case ValueTemplate::Source::list:
    case ValueTemplate::Source::tuple: {
      std::vector<c10::IValue> items;
      items.reserve(bound.items.size());
      for (std::size_t i = 0; i < bound.items.size(); ++i) {
        auto item = materialize(bound.items[i], slots);
        if (!item) return item.error().with_context("[" + std::to_string(i) + "]");
        items.push_back(std::move(*item));
      }
      if (bound.source == ValueTemplate::Source::tuple)
        return c10::IValue(c10::ivalue::Tuple::create(std::move(items)));
      return make_list(bound.type, std::move(items));
    }
  }
  return c10::IValue();
}

std::optional<NodeFailure> bind_call(const Node& node, const Binder& binder, Step& step) {
  auto resolved = resolve_call(node);
  if (auto* failure = std::get_if<NodeFailure>(&resolved)) return *failure;
  auto& [op, given] = std::get<ResolvedCall>(resolved);
  step.op = op;
  const std::vector<c10::Argument>& parameters = op.schema().arguments();
  step.returns = op.schema().returns().size();
  for (std::size_t i = 0; i < parameters.size(); ++i) {
    const c10::Argument& parameter = parameters[i];
    if (!given[i]) {
      if (!parameter.default_value())
        return failure_at(node, FailureKind::bad_argument, "missing required argument", parameter.name());
      step.arguments.push_back({parameter.name(), constant_template(*parameter.default_value())});
      continue;
    }
    try {
      auto bound =
          binder.argument(*given[i], parameter.real_type(), parameter.type(), to_std_optional(parameter.N()));
      if (!bound) return failure_at(node, FailureKind::bad_argument, bound.error().message, parameter.name());
      step.arguments.push_back({parameter.name(), std::move(*bound)});
    } catch (const std::exception& error) {
      return failure_at(node, FailureKind::bad_argument, message_of(error), parameter.name());
    }
  }
  return std::nullopt;
}

std::optional<NodeFailure> bind_getitem(const Node& node, const Slots& slots, Step& step) {
  const std::vector<Value>& args = node.args();
  if (args.size() != 2 || !node.kwargs().empty() || !args[0].is<NodeRef>() || !args[1].is<std::int64_t>())
    return failure_at(node, FailureKind::bad_argument, "getitem takes a node and an int");
  auto found = slots.find(args[0].as<NodeRef>().node);
  if (found == slots.end())
    return failure_at(node, FailureKind::bad_argument, "reads a node that has no value before this node");
  step.kind = Step::Kind::getitem;
  step.source = found->second;
  step.item = args[1].as<std::int64_t>();
  return std::nullopt;
}

std::optional<NodeFailure> bind_arithmetic(const Node& node, const SymIntArithmetic& arithmetic, const Binder& binder,
                                          Step& step) {
  const std::vector<Value>& args = node.args();
  if (args.size() != arithmetic.arity || !node.kwargs().empty())
    return failure_at(node, FailureKind::bad_argument,
                      node.target() + " takes " + std::to_string(arithmetic.arity) + " positional ints");
  step.kind = Step::Kind::arithmetic;
  step.arithmetic = &arithmetic;
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string name = i == 0 ? "a" : "b";
    auto bound = binder.argument(args[i], c10::IntType::get(), c10::IntType::get(), std::nullopt);
    if (!bound) return failure_at(node, FailureKind::bad_argument, bound.error().message, name);
    step.arguments.push_back({name, std::move(*bound)});
  }
  return std::nullopt;
}

std::optional<NodeFailure> bind_output(const Node& node, const Binder& binder, ValueTemplate& output) {
  if (node.args().size() != 1)
    return failure_at(node, FailureKind::invalid_graph, "the output node takes exactly one value");
  auto bound = binder.output(node.args()[0]);
  if (!bound) return failure_at(node, FailureKind::bad_argument, bound.error().message);
  output = std::move(*bound);
  return std::nullopt;
}

// Gives each slot to the step that reads it last (or the step that writes it, if none reads it);
// slots the output reads are kept.
void plan_releases(const Node& output, const Slots& slots, std::vector<Step>& steps) {
  constexpr std::size_t kept = static_cast<std::size_t>(-1);
  std::vector<std::size_t> last_reader(steps.size());
  for (std::size_t i = 0; i < steps.size(); ++i) last_reader[i] = i;
  auto read_by = [&](const Node* reader, std::size_t step) {
    for (const Node* input : reader->input_nodes()) last_reader[slots.at(input)] = step;
  };
  for (std::size_t i = 0; i < steps.size(); ++i) read_by(steps[i].node, i);
  read_by(&output, kept);
  for (std::size_t slot = 0; slot < steps.size(); ++slot)
    if (last_reader[slot] != kept) steps[last_reader[slot]].release.push_back(slot);
}

}  // namespace

struct EagerInterpreter::Program {
  std::vector<Step> steps;
  std::size_t placeholders = 0;
  const Node* output_node = nullptr;
  ValueTemplate output;
  std::optional<NodeFailure> failure;

  std::optional<NodeFailure> prepare(const Graph& graph, const EagerOptions& options) {
    Slots slots;
    Binder binder(slots, options);
    for (const Node* node : graph.nodes()) {
      if (node->op() == OpCode::output) {
        output_node = node;
        if (auto failed = bind_output(*node, binder, output)) return failed;
        plan_releases(*node, slots, steps);
        return std::nullopt;
      }
      Step step;
      step.node = node;
      std::optional<NodeFailure> failed;
      if (node->op() == OpCode::placeholder) {
        step.kind = Step::Kind::placeholder;
        step.input = placeholders++;
      } else if (node->op() == OpCode::get_attr) {
        step.kind = Step::Kind::constant;
      } else {
        const SymIntArithmetic* arithmetic = symint_arithmetic(node->target());
        failed = node->target() == getitem_target ? bind_getitem(*node, slots, step)
                 : arithmetic                     ? bind_arithmetic(*node, *arithmetic, binder, step)
                                                  : bind_call(*node, binder, step);
      }
      if (failed) return failed;
      slots.emplace(node, steps.size());
      steps.push_back(std::move(step));
    }
    return graph_failure(FailureKind::invalid_graph, "the graph has no output node");
  }

  EagerResult run(const std::vector<c10::IValue>& inputs, const ConstantMap& constants,
                  const NodeCallback& on_node) const {
    EagerResult result;
    if (failure) {
      result.failure = failure;
      return result;
    }
    if (inputs.size() != placeholders) {
      result.failure = graph_failure(FailureKind::bad_input,
                                     "the graph has " + std::to_string(placeholders) + " placeholders but " +
                                         std::to_string(inputs.size()) + " inputs were given");
      return result;
    }
    std::vector<c10::IValue> slots(steps.size());
    const Node* current = nullptr;
    try {
      for (std::size_t i = 0; i < steps.size(); ++i) {
        current = steps[i].node;
        result.failure = execute(steps[i], inputs, constants, slots, slots[i]);
        if (result.failure) return result;
        if (on_node) on_node(*current, slots[i]);
        for (std::size_t slot : steps[i].release) slots[slot] = c10::IValue();
      }
      current = output_node;
      auto value = materialize(output, slots);
      if (!value)
        result.failure = failure_at(*current, FailureKind::bad_argument, value.error().message);
      else
        result.output = std::move(*value);
    } catch (const std::exception& error) {
      result.failure = exception_failure(current, &error);
    } catch (...) {
      result.failure = exception_failure(current, nullptr);
    }
    return result;
  }

 private:
  std::optional<NodeFailure> execute(const Step& step, const std::vector<c10::IValue>& inputs,
                                     const ConstantMap& constants, const std::vector<c10::IValue>& slots,
                                     c10::IValue& value) const {
    switch (step.kind) {
      case Step::Kind::placeholder:
        value = inputs[step.input];
        return std::nullopt;
      case Step::Kind::constant: {
        auto found = constants.find(step.node->target());
        if (found == constants.end())
          return failure_at(*step.node, FailureKind::bad_input,
                            "no constant named '" + step.node->target() + "' was given");
        value = found->second;
        return std::nullopt;
      }
      case Step::Kind::getitem:
        return read_item(step, slots[step.source], value);
      case Step::Kind::call:
        return call(step, slots, value);
      case Step::Kind::arithmetic:
        return compute(step, slots, value);
    }
    return std::nullopt;
  }

  static std::optional<NodeFailure> read_item(const Step& step, const c10::IValue& source,
                                              c10::IValue& value) {
    if (!source.isTuple() && !source.isList())
      return failure_at(*step.node, FailureKind::bad_argument,
                        "getitem of " + source.tagKind() + ", which is neither a tuple nor a list");
    c10::ArrayRef<c10::IValue> items =
        source.isTuple() ? source.toTupleRef().elements().asArrayRef() : source.toListRef();
    auto size = static_cast<std::int64_t>(items.size());
    std::int64_t index = step.item < 0 ? step.item + size : step.item;  // negative from the end, as in Python
    if (index < 0 || index >= size)
      return failure_at(*step.node, FailureKind::bad_argument,
                        "getitem index " + std::to_string(step.item) + " is out of range for " +
                            std::to_string(size) + " values");
    value = items[static_cast<std::size_t>(index)];
    return std::nullopt;
  }

  static std::optional<NodeFailure> compute(const Step& step, const std::vector<c10::IValue>& slots,
                                            c10::IValue& value) {
    std::int64_t operands[2] = {0, 0};
    for (std::size_t i = 0; i < step.arguments.size(); ++i) {
      auto bound = materialize(step.arguments[i].value, slots);
      if (!bound)
        return failure_at(*step.node, FailureKind::bad_argument, bound.error().message, step.arguments[i].name);
      operands[i] = bound->toInt();
    }
    auto computed = apply_symint_arithmetic(*step.arithmetic, operands[0], operands[1]);
    if (!computed) return failure_at(*step.node, FailureKind::exception, computed.error().message);
    value = *computed;
    return std::nullopt;
  }

  static std::optional<NodeFailure> call(const Step& step, const std::vector<c10::IValue>& slots,
                                         c10::IValue& value) {
    std::vector<c10::IValue> stack;
    stack.reserve(step.arguments.size());
    for (const ArgumentBinding& argument : step.arguments) {
      auto bound = materialize(argument.value, slots);
      if (!bound)
        return failure_at(*step.node, FailureKind::bad_argument, bound.error().message, argument.name);
      stack.push_back(std::move(*bound));
    }
    step.op->callBoxed(stack);
    if (step.returns == 0)
      value = c10::IValue();
    else if (step.returns == 1)
      value = std::move(stack.front());
    else
      value = c10::ivalue::Tuple::create(std::move(stack));
    return std::nullopt;
  }
};

EagerInterpreter::EagerInterpreter(const Graph& graph, EagerOptions options)
    : program_(std::make_unique<Program>()) {
  try {
    program_->failure = program_->prepare(graph, options);
  } catch (const std::exception& error) {
    program_->failure = exception_failure(nullptr, &error);
  } catch (...) {
    program_->failure = exception_failure(nullptr, nullptr);
  }
}

EagerInterpreter::~EagerInterpreter() = default;
EagerInterpreter::EagerInterpreter(EagerInterpreter&&) noexcept = default;
EagerInterpreter& EagerInterpreter::operator=(EagerInterpreter&&) noexcept = default;

const NodeFailure* EagerInterpreter::preparation_failure() const {
  return program_->failure ? &*program_->failure : nullptr;
}

EagerResult EagerInterpreter::run(const std::vector<c10::IValue>& inputs, const ConstantMap& constants,
                                  const NodeCallback& on_node) const {
  return program_->run(inputs, constants, on_node);
}

EagerResult EagerInterpreter::run(const std::vector<at::Tensor>& inputs, const ConstantMap& constants,
                                  const NodeCallback& on_node) const {
  return program_->run(std::vector<c10::IValue>(inputs.begin(), inputs.end()), constants, on_node);
}

}  // namespace minifyd::worker
