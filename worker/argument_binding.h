// Graph values bound to operator parameters, once for every backend that lowers a graph itself (the
// eager interpreter, the TorchScript lowering): which values a parameter's schema type takes and how
// they convert, as Python's argument parser does (int to float, a number to a wrapped-number Tensor,
// an int to int[N]); each backend then turns the bound argument into its own form.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include <ATen/core/ivalue.h>
#include <ATen/core/jit_type.h>

#include "common/expected.h"
#include "common/graph.h"
#include "worker/eager_options.h"
#include "worker/node_failure.h"
#include "worker/graph_values.h"

namespace minifyd::worker {

// A value bound to a parameter: a constant already converted to the parameter's type, a node whose
// value must fit `type` when it exists, or a list built item by item.
struct BoundArgument {
  enum class Source { constant, node, list };
  Source source = Source::constant;
  c10::IValue constant;
  const Node* node = nullptr;
  // constant and node: the parameter's type as kernels unbox it ("fake": int for SymInt, int for
  // an enum); list: its element type.
  c10::TypePtr type;
  std::vector<BoundArgument> items;  // list
};

// Binds `value` to a parameter of declared type `real` (ScalarType, SymInt) whose kernels take
// `fake` (int); `size` is the N of int[N], which a single int fills. Enums are encoded as `encoding`
// says. Errors say what the parameter expects and what it got.
Expected<BoundArgument> bind_argument(const Value& value, const c10::TypePtr& real, const c10::TypePtr& fake,
                                      std::optional<std::int32_t> size, const EagerOptions& options,
                                      EnumEncoding encoding);

// The value as a parameter of (fake) type `type` receives it, converting as Python does; nullopt
// if it does not fit. For constants at bind time and for node values at run time.
std::optional<c10::IValue> coerce(const c10::IValue& value, const c10::Type& type);

// A list typed by the schema's element type, which is what the boxed kernels unpack.
c10::IValue make_list(const c10::TypePtr& element_type, std::vector<c10::IValue> items);

}  // namespace minifyd::worker
