// What graph argument values and failures become in LibTorch terms, shared by every backend that
// lowers a graph itself (the eager interpreter, the TorchScript lowering): failure values naming
// node and argument, readable descriptions of values, IValues of plain values, operator names.
#pragma once

#include <exception>
#include <string>
#include <variant>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/core/ivalue.h>
#include <ATen/core/jit_type.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/operator_name.h>

#include "common/expected.h"
#include "common/graph.h"
#include "worker/eager_options.h"
#include "worker/node_failure.h"

namespace minifyd::worker {

NodeFailure graph_failure(FailureKind kind, std::string message);
NodeFailure failure_at(const Node& node, FailureKind kind, std::string message, std::string argument = {});
// An exception's message without c10's C++ backtrace, which differs between builds and runs.
std::string message_of(const std::exception& error);
// node null: a failure of the graph as a whole; error null: not derived from std::exception.
NodeFailure exception_failure(const Node* node, const std::exception* error);

// "int 3", "node 'mm'", "dtype float16": for messages about arguments that do not bind.
std::string describe(const Value& value);

// How dtype, layout and memory format values are passed: as their c10 types (boxed kernels) or
// as ints (TorchScript graphs hold them so).
enum class EnumEncoding { typed, as_int };

// The IValue of a value that is neither a node reference nor a list. "cuda" devices map to
// options.cuda_device; with options.fp64_reference floating dtypes become float64. Throws
// c10::Error for a device name c10 refuses.
Expected<c10::IValue> leaf_ivalue(const Value& value, const EagerOptions& options, EnumEncoding encoding);

// dtype, layout, memory format and device values bind to parameters of their own type only, and
// those parameters take nothing else, as in Python (TorchScript itself would take an int).
bool enumeration_matches(const Value& value, c10::TypeKind kind);
const c10::TypePtr& without_optional(const c10::TypePtr& type);

// A number passed as a Tensor, as Python's argument parser makes it: a 0-dim CPU tensor of the
// number's default dtype, marked as a wrapped number so type promotion treats it as a scalar.
at::Tensor wrapped_number(const c10::IValue& number);

// The leaves of an output value in order: tuples and lists are walked, everything else is a leaf.
std::vector<c10::IValue> flatten_output(const c10::IValue& value);

// Splits "aten::add.Tensor" into the c10 operator name and overload ("" for the default one).
c10::OperatorName operator_name(const std::string& target);

// A call_function node's operator, and its args and kwargs in schema order: given[i] is the value
// for parameter i, or null where the parameter takes its default (or is missing).
struct ResolvedCall {
  c10::OperatorHandle op;
  std::vector<const Value*> given;
};

// Fails naming the node for a target that is no operator name, an operator the dispatcher does
// not have, too many positional arguments, an unknown keyword, or one given twice.
std::variant<ResolvedCall, NodeFailure> resolve_call(const Node& node);

}  // namespace minifyd::worker
