// Dead-code elimination, and which operators must survive it.
#include "daemon/search/dead_code.h"

#include <algorithm>
#include <string_view>

namespace minifyd::search {
namespace {

constexpr std::string_view side_effectful[] = {
    "aten::_assert_async",  "aten::_assert_scalar",        "aten::_assert_tensor_metadata",
    "aten::sym_constrain_range", "aten::sym_constrain_range_for_size",
    "profiler::_record_function_enter", "profiler::_record_function_enter_new",
    "profiler::_record_function_exit"};
constexpr std::string_view in_place_dunders[] = {"__iand__", "__ior__", "__ixor__", "__ilshift__",
                                                 "__irshift__"};

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

bool is_impure(const SearchState& state, const Node& node) {
  switch (node.op()) {
    case OpCode::output: return true;
    case OpCode::placeholder: return !is_load(state, node);
    case OpCode::get_attr: return false;
    case OpCode::call_function: return has_side_effects(node);
  }
  return true;
}

}  // namespace

bool has_side_effects(const Node& node) {
  if (node.op() != OpCode::call_function || node.target() == getitem_target || symint_op(node.target()))
    return false;
  std::string_view target = node.target();
  std::size_t dot = target.find('.');
  std::string_view op = target.substr(0, dot);
  std::string_view overload = dot == std::string_view::npos ? "" : target.substr(dot + 1);
  std::string_view name = op.substr(op.find("::") + 2);
  bool dunder = name.size() > 4 && name.substr(0, 2) == "__" && ends_with(name, "__");
  if (!dunder && ends_with(name, "_")) return true;  // add_, copy_
  if (std::find(std::begin(in_place_dunders), std::end(in_place_dunders), name) != std::end(in_place_dunders))
    return true;
  if (overload == "out" || ends_with(overload, "_out")) return true;
  return std::find(std::begin(side_effectful), std::end(side_effectful), op) != std::end(side_effectful);
}

bool eliminate_dead_code(SearchState& state) {
  Graph& graph = state.document.graph;
  auto bindings = input_bindings(state.document);
  std::vector<Node*> nodes = graph.nodes();
  bool changed = false;
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
    if (!(*it)->users().empty() || is_impure(state, **it)) continue;
    // Without users, erase cannot be refused.
    (void)graph.erase_node(*it);
    changed = true;
  }
  if (changed) {
    rebind_inputs(state.document, bindings);
    forget_erased_loads(state);
  }
  return changed;
}

}  // namespace minifyd::search
