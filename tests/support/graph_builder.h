// Terse construction of graphs in tests: placeholder, call, output and value helpers that REQUIRE
// each node to be created.
#pragma once

#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

#include "common/graph.h"

namespace minifyd::test {

inline Node* add_node(Graph& graph, OpCode op, const std::string& name, const std::string& target,
                      std::vector<Value> args = {}, Kwargs kwargs = {}) {
  auto node = graph.create_node(op, name, target, std::move(args), std::move(kwargs));
  REQUIRE(node.has_value());
  return *node;
}

inline Node* placeholder(Graph& graph, const std::string& name) {
  return add_node(graph, OpCode::placeholder, name, name);
}

inline Node* call(Graph& graph, const std::string& name, const std::string& target, std::vector<Value> args,
                  Kwargs kwargs = {}) {
  return add_node(graph, OpCode::call_function, name, target, std::move(args), std::move(kwargs));
}

inline void output(Graph& graph, Value value) {
  add_node(graph, OpCode::output, "output", "output", {std::move(value)});
}

inline Value ref(Node* node) { return NodeRef{node}; }
inline Value list(std::vector<Value> items) { return ListValue{std::move(items), false}; }
inline Value tuple(std::vector<Value> items) { return ListValue{std::move(items), true}; }

// The 10-node graph of the per-run timing tests: x, y -> mm, add (alpha 2), relu, max.dim, getitem,
// view, clamp -> output. Takes two float32[4, 4] inputs.
inline void build_ten_node_graph(Graph& graph) {
  Node* x = placeholder(graph, "x");
  Node* y = placeholder(graph, "y");
  Node* mm = call(graph, "mm", "aten::mm", {ref(x), ref(y)});
  Node* added = call(graph, "add", "aten::add.Tensor", {ref(mm), ref(x)}, {{"alpha", 2}});
  Node* relu = call(graph, "relu", "aten::relu", {ref(added)});
  Node* max = call(graph, "max", "aten::max.dim", {ref(relu), 1});
  Node* values = call(graph, "values", "getitem", {ref(max), 0});
  Node* view = call(graph, "view", "aten::view", {ref(values), list({-1, 1})});
  Node* clamp = call(graph, "clamp", "aten::clamp", {ref(view), 0.0, 10.0});
  output(graph, tuple({ref(clamp)}));
  REQUIRE(graph.size() == 10);
}

// A graph traced with dynamic shapes: x (float32[4, s0]) and s0 (a SymInt input, 6) -> x viewed as
// [-((1 - s0 * 4) // 3), -3 % s0], which is [8, 3] with Python's floor division and modulo (and no
// view of 24 elements with C++'s truncating ones).
inline void build_symint_view_graph(Graph& graph) {
  Node* x = placeholder(graph, "x");
  Node* s0 = placeholder(graph, "s0");
  Node* times = call(graph, "mul", "operator.mul", {ref(s0), 4});
  Node* less = call(graph, "sub", "operator.sub", {1, ref(times)});
  Node* divided = call(graph, "floordiv", "operator.floordiv", {ref(less), 3});
  Node* rows = call(graph, "neg", "operator.neg", {ref(divided)});
  Node* columns = call(graph, "mod", "operator.mod", {-3, ref(s0)});
  Node* view = call(graph, "view", "aten::view", {ref(x), list({ref(rows), ref(columns)})});
  output(graph, ref(view));
}

}  // namespace minifyd::test
