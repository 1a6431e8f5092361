// Failure values, value descriptions and plain-value IValues.
#include "worker/graph_values.h"

#include <functional>
#include <sstream>
#include <typeinfo>
#include <utility>

#include <c10/util/Type.h>

#include "protocol/verdict.h"
#include "worker/torch_compat.h"

namespace minifyd::worker {
namespace {

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

template <class Enum>
c10::IValue encode(Enum value, EnumEncoding encoding) {
  return encoding == EnumEncoding::typed ? c10::IValue(value) : c10::IValue(static_cast<std::int64_t>(value));
}

}  // namespace

NodeFailure graph_failure(FailureKind kind, std::string message) {
  NodeFailure failure;
  failure.kind = kind;
  failure.message = std::move(message);
  return failure;
}

NodeFailure failure_at(const Node& node, FailureKind kind, std::string message, std::string argument) {
  NodeFailure failure = graph_failure(kind, std::move(message));
  failure.node = node.name();
  failure.op = node.op() == OpCode::output ? "output" : node.target();
  failure.argument = std::move(argument);
  return failure;
}

std::string message_of(const std::exception& error) {
  if (const auto* c10_error = dynamic_cast<const c10::Error*>(&error)) return c10_error->what_without_backtrace();
  return error.what();
}

NodeFailure exception_failure(const Node* node, const std::exception* error) {
  std::string message = error ? message_of(*error) : "an exception not derived from std::exception";
  NodeFailure failure = node ? failure_at(*node, FailureKind::exception, std::move(message))
                             : graph_failure(FailureKind::exception, std::move(message));
  failure.exception_type = error ? c10::demangle(typeid(*error).name()) : protocol::unknown_exception_type;
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

Expected<c10::IValue> leaf_ivalue(const Value& value, const EagerOptions& options, EnumEncoding encoding) {
  if (value.is<bool>()) return c10::IValue(value.as<bool>());
  if (value.is<std::int64_t>()) return c10::IValue(value.as<std::int64_t>());
  if (value.is<double>()) return c10::IValue(value.as<double>());
  if (value.is<std::string>()) return c10::IValue(value.as<std::string>());
  if (value.is<DTypeValue>()) {
    DType dtype = value.as<DTypeValue>().dtype;
    return encode(options.fp64_reference && is_floating(dtype) ? at::kDouble : to_scalar_type(dtype), encoding);
  }
  if (value.is<DeviceValue>()) {
    at::Device device(value.as<DeviceValue>().name);
    return c10::IValue(device.is_cuda() && options.cuda_device ? *options.cuda_device : device);
  }
  if (value.is<LayoutValue>()) {
    auto layout = to_layout(value.as<LayoutValue>().name);
    if (!layout) return layout.error();
    return encode(*layout, encoding);
  }
  if (value.is<MemoryFormatValue>()) {
    auto format = to_memory_format(value.as<MemoryFormatValue>().name);
    if (!format) return format.error();
    return encode(*format, encoding);
  }
  return c10::IValue();
}

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

at::Tensor wrapped_number(const c10::IValue& number) {
  at::ScalarType dtype = number.isDouble() ? at::kDouble : number.isBool() ? at::kBool : at::kLong;
  at::Tensor tensor = at::scalar_tensor(number.toScalar(), at::TensorOptions().dtype(dtype));
  tensor.unsafeGetTensorImpl()->set_wrapped_number(true);
  return tensor;
}

std::vector<c10::IValue> flatten_output(const c10::IValue& value) {
  std::vector<c10::IValue> leaves;
  std::function<void(const c10::IValue&)> walk = [&](const c10::IValue& item) {
    if (item.isTuple()) {
      for (const c10::IValue& element : item.toTupleRef().elements()) walk(element);
    } else if (item.isList()) {
      for (const c10::IValue& element : item.toListRef()) walk(element);
    } else {
      leaves.push_back(item);
    }
  };
  walk(value);
  return leaves;
}

c10::OperatorName operator_name(const std::string& target) {
  std::size_t dot = target.find('.', target.find("::"));
  if (dot == std::string::npos) return c10::OperatorName(target, "");
  return c10::OperatorName(target.substr(0, dot), target.substr(dot + 1));
}

std::variant<ResolvedCall, NodeFailure> resolve_call(const Node& node) {
  if (!is_operator_name(node.target()))
    return failure_at(node, FailureKind::unknown_operator,
                      "'" + node.target() + "' is not an operator name such as aten::add.Tensor");
  auto handle = to_std_optional(c10::Dispatcher::singleton().findSchema(operator_name(node.target())));
  if (!handle) return failure_at(node, FailureKind::unknown_operator, "the dispatcher has no operator " + node.target());
  const std::vector<c10::Argument>& parameters = handle->schema().arguments();
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
    if (i == parameters.size()) return failure_at(node, FailureKind::bad_argument, "unknown keyword argument", name);
    if (given[i]) return failure_at(node, FailureKind::bad_argument, "given both by position and by keyword", name);
    given[i] = &value;
  }
  return ResolvedCall{*handle, std::move(given)};
}

}  // namespace minifyd::worker
