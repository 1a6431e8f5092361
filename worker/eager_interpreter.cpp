// Binds graph values to operator schemas once, then runs the bound program node by node.
#include "worker/eager_interpreter.h"

#include <sstream>
#include <typeinfo>
#include <utility>

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/function_schema.h>
#include <c10/util/Type.h>

#include "worker/torch_compat.h"

namespace minifyd::worker {

const char* to_string(FailureKind kind) {
  switch (kind) {
    case FailureKind::invalid_graph:
      return "invalid_graph";
    case FailureKind::unknown_operator:
      return "unknown_operator";
    case FailureKind::bad_argument:
      return "bad_argument";
    case FailureKind::bad_input:
      return "bad_input";
    case FailureKind::exception:
      return "exception";
  }
  return "unknown";
}

std::string NodeFailure::to_string() const {
  std::string text = node.empty() ? "graph" : "node '" + node + "'";
  if (!op.empty()) text += " (" + op + ")";
  if (!argument.empty()) text += ": argument '" + argument + "'";
  text += ": ";
  if (!exception_type.empty()) text += exception_type + ": ";
  return text + message;
}

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
  enum class Kind { placeholder, constant, getitem, call };
  Kind kind = Kind::call;
  const Node* node = nullptr;
  std::size_t input = 0;   // placeholder: index into the inputs
  std::size_t source = 0;  // getitem: the slot read
  std::int64_t item = 0;   // getitem: the index read
  std::optional<c10::OperatorHandle> op;
  std::vector<ArgumentBinding> arguments;  // one per schema argument, in schema order
  std::size_t returns = 0;
  // Slots whose last reader is this step: dropping them keeps peak memory near eager PyTorch's.
  std::vector<std::size_t> release;
};

using Slots = std::unordered_map<const Node*, std::size_t>;

NodeFailure graph_failure(FailureKind kind, std::string message) {
  NodeFailure failure;
  failure.kind = kind;
  failure.message = std::move(message);
  return failure;
}

NodeFailure failure_at(const Node& node, FailureKind kind, std::string message, std::string argument = {}) {
  NodeFailure failure = graph_failure(kind, std::move(message));
  failure.node = node.name();
  failure.op = node.op() == OpCode::output ? "output" : node.target();
  failure.argument = std::move(argument);
  return failure;
}

std::string message_of(const std::exception& error) {
  // c10::Error::what() appends the C++ backtrace, which differs between builds and runs.
  if (const auto* c10_error = dynamic_cast<const c10::Error*>(&error))
    return c10_error->what_without_backtrace();
  return error.what();
}

// node null: the graph as a whole; error null: something not derived from std::exception.
NodeFailure exception_failure(const Node* node, const std::exception* error) {
  std::string message = error ? message_of(*error) : "an exception not derived from std::exception";
  NodeFailure failure = node ? failure_at(*node, FailureKind::exception, std::move(message))
                             : graph_failure(FailureKind::exception, std::move(message));
  failure.exception_type = error ? c10::demangle(typeid(*error).name()) : "unknown";
  return failure;
}

std::string describe(const Value& value) {
  if (value.is<NoneValue>()) return "None";
  if (value.is<bool>()) return value.as<bool>() ? "bool True" : "bool False";
  if (value.is<std::int64_t>()) return "int " + std::to_string(value.as<std::int64_t>());
  if (value.is<double>()) {
    std::ostringstream text;
    text << "float " << value.as<double>();
    return text.str();
  }
  if (value.is<std::string>()) return "str '" + value.as<std::string>() + "'";
  if (value.is<NodeRef>()) return "node '" + value.as<NodeRef>().node->name() + "'";
  if (value.is<ListValue>()) return value.as<ListValue>().is_tuple ? "tuple" : "list";
  if (value.is<DTypeValue>()) return std::string("dtype ") + to_string(value.as<DTypeValue>().dtype);
  if (value.is<DeviceValue>()) return "device " + value.as<DeviceValue>().name;
  if (value.is<LayoutValue>()) return "layout " + value.as<LayoutValue>().name;
  return "memory_format " + value.as<MemoryFormatValue>().name;
}

Expected<at::Layout> to_layout(const std::string& name) {
  static const std::pair<const char*, at::Layout> layouts[] = {
      {"strided", at::kStrided},      {"sparse_coo", at::kSparse},    {"sparse_csr", at::kSparseCsr},
      {"sparse_csc", at::kSparseCsc}, {"sparse_bsr", at::kSparseBsr}, {"sparse_bsc", at::kSparseBsc},
      {"_mkldnn", at::kMkldnn}};
  for (const auto& [known, layout] : layouts)
    if (name == known) return layout;
  return make_error(ErrorKind::invalid_input, "unknown layout '" + name + "'");
}

Expected<at::MemoryFormat> to_memory_format(const std::string& name) {
  static const std::pair<const char*, at::MemoryFormat> formats[] = {
      {"contiguous_format", at::MemoryFormat::Contiguous},
      {"preserve_format", at::MemoryFormat::Preserve},
      {"channels_last", at::MemoryFormat::ChannelsLast},
      {"channels_last_3d", at::MemoryFormat::ChannelsLast3d}};
  for (const auto& [known, format] : formats)
    if (name == known) return format;
  return make_error(ErrorKind::invalid_input, "unknown memory format '" + name + "'");
}

// The IValue of a value that is neither a node reference nor a list. Throws c10::Error for a
// device name c10 does not accept.
Expected<c10::IValue> leaf_ivalue(const Value& value, const EagerOptions& options) {
  if (value.is<bool>()) return c10::IValue(value.as<bool>());
  if (value.is<std::int64_t>()) return c10::IValue(value.as<std::int64_t>());
  if (value.is<double>()) return c10::IValue(value.as<double>());
  if (value.is<std::string>()) return c10::IValue(value.as<std::string>());
  if (value.is<DTypeValue>()) {
    DType dtype = value.as<DTypeValue>().dtype;
    return c10::IValue(options.fp64_reference && is_floating(dtype) ? at::kDouble : to_scalar_type(dtype));
  }
  if (value.is<DeviceValue>()) {
    at::Device device(value.as<DeviceValue>().name);
    return c10::IValue(device.is_cuda() && options.cuda_device ? *options.cuda_device : device);
  }
  if (value.is<LayoutValue>()) {
    auto layout = to_layout(value.as<LayoutValue>().name);
    if (!layout) return layout.error();
    return c10::IValue(*layout);
  }
  if (value.is<MemoryFormatValue>()) {
    auto format = to_memory_format(value.as<MemoryFormatValue>().name);
    if (!format) return format.error();
    return c10::IValue(*format);
  }
  return c10::IValue();
}

// dtype, layout, memory format and device values bind to parameters of their own type only, and
// those parameters take nothing else (TorchScript would take an int for a dtype; Python does not).
bool enumeration_matches(const Value& value, c10::TypeKind kind) {
  return (kind == c10::TypeKind::ScalarTypeType) == value.is<DTypeValue>() &&
         (kind == c10::TypeKind::LayoutType) == value.is<LayoutValue>() &&
         (kind == c10::TypeKind::MemoryFormatType) == value.is<MemoryFormatValue>() &&
         (kind == c10::TypeKind::DeviceObjType) == value.is<DeviceValue>();
}

const c10::TypePtr& without_optional(const c10::TypePtr& type) {
  return type->kind() == c10::TypeKind::OptionalType ? type->expectRef<c10::OptionalType>().getElementType()
                                                     : type;
}

// As Python's argument parser does for a number passed as a Tensor: a 0-dim CPU tensor of the
// number's default dtype, marked as a wrapped number so type promotion treats it as a scalar.
at::Tensor wrapped_number(const c10::IValue& number) {
  at::ScalarType dtype = number.isDouble() ? at::kDouble : number.isBool() ? at::kBool : at::kLong;
  at::Tensor tensor = at::scalar_tensor(number.toScalar(), at::TensorOptions().dtype(dtype));
  tensor.unsafeGetTensorImpl()->set_wrapped_number(true);
  return tensor;
}

c10::IValue make_list(const c10::TypePtr& element_type, std::vector<c10::IValue> items) {
  // A list typed by the schema's element type is what the boxed kernels unpack (int[] for SymInt[]
  // in 2.x, whose kernels convert an int list themselves; Optional[Tensor] for Tensor?[]).
  c10::impl::GenericList list(element_type);
  list.reserve(items.size());
  for (auto& item : items) list.push_back(std::move(item));
  return c10::IValue(std::move(list));
}

// The value as a parameter of schema type `type` (a "fake" type, in which SymInt is int and enums
// are int) receives it, converting as Python does (int to float, number to Tensor); nullopt if it
// does not fit.
std::optional<c10::IValue> coerce(const c10::IValue& value, const c10::Type& type) {
  switch (type.kind()) {
    case c10::TypeKind::TensorType:
      if (value.isTensor()) return value;
      if (value.isInt() || value.isDouble() || value.isBool()) return c10::IValue(wrapped_number(value));
      break;
    case c10::TypeKind::IntType:
      if (value.isInt()) return value;
      break;
    case c10::TypeKind::FloatType:
      if (value.isDouble()) return value;
      if (value.isInt()) return c10::IValue(static_cast<double>(value.toInt()));
      break;
    case c10::TypeKind::NumberType:
      if (value.isInt() || value.isDouble() || value.isBool() || value.isComplexDouble()) return value;
      break;
    case c10::TypeKind::BoolType:
      if (value.isBool()) return value;
      break;
    case c10::TypeKind::StringType:
      if (value.isString()) return value;
      break;
    case c10::TypeKind::DeviceObjType:
      if (value.isDevice()) return value;
      break;
    case c10::TypeKind::OptionalType:
      if (value.isNone()) return value;
      return coerce(value, *type.expectRef<c10::OptionalType>().getElementType());
    case c10::TypeKind::ListType: {
      if (!value.isList()) break;
      const c10::TypePtr& element_type = type.expectRef<c10::ListType>().getElementType();
      std::vector<c10::IValue> items;
      for (const c10::IValue& item : value.toListRef()) {
        auto coerced = coerce(item, *element_type);
        if (!coerced) return std::nullopt;
        items.push_back(std::move(*coerced));
      }
      return make_list(element_type, std::move(items));
    }
    default:
      break;
  }
  return std::nullopt;
}

ValueTemplate constant_template(c10::IValue value) {
  ValueTemplate bound;
  bound.constant = std::move(value);
  return bound;
}

// Turns graph values into templates: typed for operator arguments, untyped for the output.
class Binder {
 public:
  Binder(const Slots& slots, const EagerOptions& options) : slots_(slots), options_(options) {}

  // `real` is the schema's declared type (ScalarType, SymInt), `fake` the type its kernels unbox
  // (int); `size` the N of int[N], which a single int fills as in Python.
  Expected<ValueTemplate> argument(const Value& value, const c10::TypePtr& real, const c10::TypePtr& fake,
                                   std::optional<std::int32_t> size) const {
    if (value.is<NodeRef>()) return node(value.as<NodeRef>().node, fake);
    if (value.is<NoneValue>()) {
      if (fake->kind() != c10::TypeKind::OptionalType) return mismatch(value, real);
      return constant_template(c10::IValue());
    }
    const c10::TypePtr& real_type = without_optional(real);
    const c10::TypePtr& fake_type = without_optional(fake);
    if (fake_type->kind() == c10::TypeKind::ListType) return list(value, real_type, fake_type, size);
    if (value.is<ListValue>() || !enumeration_matches(value, real_type->kind())) return mismatch(value, real);
    auto leaf = leaf_ivalue(value, options_);
    if (!leaf) return leaf.error();
    auto coerced = coerce(*leaf, *fake_type);
    if (!coerced) return mismatch(value, real);
    return constant_template(std::move(*coerced));
  }

  Expected<ValueTemplate> output(const Value& value) const {
    if (value.is<NodeRef>()) return node(value.as<NodeRef>().node, c10::TypePtr());
    if (!value.is<ListValue>()) {
      auto leaf = leaf_ivalue(value, options_);
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

  static Error mismatch(const Value& value, const c10::TypePtr& real) {
    return make_error(ErrorKind::invalid_input, "expects " + real->str() + ", got " + describe(value));
  }

  Expected<ValueTemplate> list(const Value& value, const c10::TypePtr& real, const c10::TypePtr& fake,
                               std::optional<std::int32_t> size) const {
    const c10::TypePtr& real_element = real->expectRef<c10::ListType>().getElementType();
    const c10::TypePtr& fake_element = fake->expectRef<c10::ListType>().getElementType();
    if (value.is<std::int64_t>() && fake_element->kind() == c10::TypeKind::IntType) {
      std::vector<c10::IValue> repeated(static_cast<std::size_t>(size.value_or(1)), value.as<std::int64_t>());
      return constant_template(make_list(fake_element, std::move(repeated)));
    }
    if (!value.is<ListValue>()) return mismatch(value, real);
    ValueTemplate bound;
    bound.source = ValueTemplate::Source::list;
    bound.type = fake_element;
    bool all_constant = true;
    const std::vector<Value>& items = value.as<ListValue>().items;
    for (std::size_t i = 0; i < items.size(); ++i) {
      auto item = argument(items[i], real_element, fake_element, std::nullopt);
      if (!item) return item.error().with_context("[" + std::to_string(i) + "]");
      all_constant = all_constant && item->source == ValueTemplate::Source::constant;
      bound.items.push_back(std::move(*item));
    }
    if (!all_constant) return bound;
    std::vector<c10::IValue> constants;
    for (ValueTemplate& item : bound.items) constants.push_back(std::move(item.constant));
    return constant_template(make_list(fake_element, std::move(constants)));
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

// Splits "aten::add.Tensor" into the c10 operator name and overload ("" for the default one).
c10::OperatorName operator_name(const std::string& target) {
  std::size_t dot = target.find('.', target.find("::"));
  if (dot == std::string::npos) return c10::OperatorName(target, "");
  return c10::OperatorName(target.substr(0, dot), target.substr(dot + 1));
}

std::optional<NodeFailure> bind_call(const Node& node, const Binder& binder, Step& step) {
  if (!is_operator_name(node.target()))
    return failure_at(node, FailureKind::unknown_operator,
                      "'" + node.target() + "' is not an operator name such as aten::add.Tensor");
  step.op = to_std_optional(c10::Dispatcher::singleton().findSchema(operator_name(node.target())));
  if (!step.op)
    return failure_at(node, FailureKind::unknown_operator, "the dispatcher has no operator " + node.target());
  const c10::FunctionSchema& schema = step.op->schema();
  const std::vector<c10::Argument>& parameters = schema.arguments();
  step.returns = schema.returns().size();

  std::size_t positional = 0;
  while (positional < parameters.size() && !parameters[positional].kwarg_only()) ++positional;
  if (node.args().size() > positional)
    return failure_at(node, FailureKind::bad_argument,
                      "takes " + std::to_string(positional) + " positional arguments but " +
                          std::to_string(node.args().size()) + " were given");
  std::vector<const Value*> given(parameters.size(), nullptr);
  for (std::size_t i = 0; i < node.args().size(); ++i) given[i] = &node.args()[i];
  for (const auto& [name, value] : node.kwargs()) {
    std::size_t i = 0;
    while (i < parameters.size() && parameters[i].name() != name) ++i;
    if (i == parameters.size())
      return failure_at(node, FailureKind::bad_argument, "unknown keyword argument", name);
    if (given[i])
      return failure_at(node, FailureKind::bad_argument, "given both by position and by keyword", name);
    given[i] = &value;
  }

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
        failed = node->target() == getitem_target ? bind_getitem(*node, slots, step)
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
