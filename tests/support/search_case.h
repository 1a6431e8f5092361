// Builds search states for tests the way export + propagate would: every input and every tensor
// valued computation gets a made-up stored value; tuple-valued nodes get none.
#pragma once

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "daemon/search/search_state.h"

namespace minifyd::search::test {

class SearchCase {
 public:
  Node* input(const std::string& name) {
    Node* node = add(OpCode::placeholder, name, "", {});
    state_.document.inputs.push_back(meta_at(new_storage_index()));
    return node;
  }
  // A SymInt input (dynamic shapes): an int, no stored value.
  Node* symint_input(const std::string& name, std::int64_t value) {
    Node* node = add(OpCode::placeholder, name, "", {});
    state_.document.inputs.push_back(SymIntInput{value});
    return node;
  }
  // A computation whose value propagate stored.
  Node* call(const std::string& name, const std::string& target, std::vector<Value> args) {
    Node* node = add(OpCode::call_function, name, target, std::move(args));
    eager_[name] = EagerValue{new_storage(), meta_at(0)};
    return node;
  }
  // A multi-output computation: no stored value, read through getitem.
  Node* tuple_call(const std::string& name, const std::string& target, std::vector<Value> args) {
    return add(OpCode::call_function, name, target, std::move(args));
  }
  Node* getitem(const std::string& name, Node* of, int index) {
    return call(name, std::string(getitem_target), {NodeRef{of}, index});
  }
  // A placeholder that stands for a stored value fed at this position (a load).
  Node* load(const std::string& name) {
    Node* node = add(OpCode::placeholder, name, "", {});
    state_.document.inputs.push_back(meta_at(new_storage_index()));
    state_.loads.insert(name);
    return node;
  }
  Node* constant(const std::string& name) {
    Node* node = add(OpCode::get_attr, name, name, {});
    state_.document.constants[name] = meta_at(new_storage_index());
    return node;
  }
  void output(Value returned) { add(OpCode::output, "output", "", {std::move(returned)}); }
  void output_tuple(std::vector<Node*> nodes) {
    ListValue tuple{{}, true};
    for (Node* node : nodes) tuple.items.emplace_back(NodeRef{node});
    output(std::move(tuple));
  }

  // The finished state; the case is spent afterwards.
  SearchState build() {
    state_.eager = std::make_shared<const EagerValues>(std::move(eager_));
    REQUIRE(document_problems(state_.document).empty());
    return std::move(state_);
  }

 private:
  Node* add(OpCode op, const std::string& name, const std::string& target, std::vector<Value> args) {
    auto created = state_.document.graph.create_node(op, name, target, std::move(args));
    REQUIRE(created.has_value());
    return *created;
  }
  StorageRef new_storage() {
    char hash[65];
    std::snprintf(hash, sizeof hash, "%064x", ++storages_made_);
    return StorageRef{hash, 12, "cpu", std::nullopt};
  }
  std::size_t new_storage_index() {
    state_.document.storages.push_back(new_storage());
    return state_.document.storages.size() - 1;
  }
  static TensorMeta meta_at(std::size_t storage) { return TensorMeta{storage, DType::float32, {3}, {1}, 0, false}; }

  SearchState state_;
  EagerValueMap eager_;
  unsigned storages_made_ = 0;
};

inline Node* find_node(const SearchState& state, const std::string& name) {
  Node* node = state.document.graph.find(name);
  REQUIRE(node != nullptr);
  return node;
}

inline std::vector<std::string> node_names(const SearchState& state) {
  std::vector<std::string> names;
  for (const Node* node : state.document.graph.nodes()) names.push_back(node->name());
  return names;
}

// PyTorch's test_tup_use as make_fx writes it:
// f(a, b): tup = torch.std_mean(a); return (tup[0] + b * tup[1],)
inline SearchState tup_use_case(const std::string& a_name = "a_1", const std::string& b_name = "b_1") {
  SearchCase c;
  Node* a = c.input(a_name);
  Node* b = c.input(b_name);
  Node* std_mean = c.tuple_call("std_mean", "aten::std_mean.correction", {NodeRef{a}});
  Node* first = c.getitem("getitem", std_mean, 0);
  Node* second = c.getitem("getitem_1", std_mean, 1);
  Node* mul = c.call("mul", "aten::mul.Tensor", {NodeRef{b}, NodeRef{second}});
  Node* add = c.call("add", "aten::add.Tensor", {NodeRef{first}, NodeRef{mul}});
  c.output_tuple({add});
  return c.build();
}

}  // namespace minifyd::search::test
