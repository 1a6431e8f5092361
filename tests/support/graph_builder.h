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

}  // namespace minifyd::test
