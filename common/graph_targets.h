// What a graph may call and how it may name things: the one rule (worker/python/minifyd/graph_targets.json,
// compiled in here and read by the Python side's graph_format.py), applied by Graph::lint and the
// document's checks, and so by `minify validate`, every command and job that loads a graph, and the
// C++ worker. docs/security.md explains it.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>

namespace minifyd {

// The namespaces a job's operator libraries (--op-library NS=PATH.so, common/operator_library.h) add to
// the rule's, for that job alone: empty for every graph whose job names none. Passed to each check
// that knows the job, never kept anywhere else.
struct OperatorScope {
  std::set<std::string, std::less<>> namespaces;
};

// Why a graph may not call this operator name ("ns::op" or "ns::op.overload"), or nothing when the
// rule (with `scope`'s namespaces) lets it. Whether the operator exists is the worker's PyTorch's to
// say, not the rule's.
std::optional<std::string> operator_refusal(std::string_view target, const OperatorScope& scope = {});

// Why an operator library may not add the namespace `name_space`, or nothing when it may: an
// identifier, not one of the rule's own (aten, prims, quantized: a library adds operators, it does
// not stand in for PyTorch's).
std::optional<std::string> library_namespace_refusal(std::string_view name_space);

// [A-Za-z_][A-Za-z0-9_]*, in ASCII whatever the locale.
bool is_identifier(std::string_view text);

// Why `name` may not name a node or a keyword argument, or nothing when it may: the rule's identifier
// ([A-Za-z_][A-Za-z0-9_]*, ASCII), not a Python keyword, not longer than its maximum. Names reach
// Python that PyTorch's FX writes (and after_aot's repro writer with it) without quoting them, so
// anything else would be code.
std::optional<std::string> name_refusal(std::string_view name);
// The same for a constant's name, a get_attr target: a dotted path whose every segment is a name.
std::optional<std::string> attribute_path_refusal(std::string_view path);

// `text` as an error message may quote it: a JSON string (control characters, quotes and non-ASCII
// escaped), cut to its first 80 bytes, so a hostile name can neither break a message's line nor fill
// a log.
std::string quoted_for_message(std::string_view text);
// A node's or a constant's name as messages name it: 'add' where the rule lets it be a name (a dotted
// path of identifiers), else quoted_for_message's form.
std::string node_label(std::string_view name);

}  // namespace minifyd
