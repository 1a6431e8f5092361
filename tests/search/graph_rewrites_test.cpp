// The rewrites delta debugging is made of: nodes to loads (with the is_tuple recursion),
// consolidation, dead code, unused inputs, and the isolation of some nodes built from them; each
// keeps every input bound to its own tensor.
#include <catch2/catch.hpp>

#include "daemon/search/consolidate.h"
#include "daemon/search/dead_code.h"
#include "daemon/search/node_isolation.h"
#include "daemon/search/node_to_load.h"
#include "daemon/search/unused_inputs.h"
#include "tests/support/search_case.h"

using namespace minifyd;
using namespace minifyd::search;
using namespace minifyd::search::test;

namespace {

// The hash of the tensor bound to a placeholder.
std::string input_hash(const SearchState& state, const std::string& placeholder) {
  std::vector<Node*> placeholders = state.document.graph.placeholders();
  for (std::size_t i = 0; i < placeholders.size(); ++i)
    if (placeholders[i]->name() == placeholder)
      return state.document.storages.at(std::get<TensorMeta>(state.document.inputs.at(i)).storage).hash;
  return "no placeholder " + placeholder;
}

}  // namespace

TEST_CASE("a tuple-valued node becomes loads at its getitem users", "[search]") {
  SearchState state = tup_use_case("a", "b");
  REQUIRE(convert_to_loads(state, 2, 3));
  CHECK(document_problems(state.document).empty());
  CHECK(node_names(state) ==
        std::vector<std::string>{"a", "b", "std_mean", "getitem", "getitem_1", "mul", "add", "output"});
  CHECK(find_node(state, "getitem")->op() == OpCode::placeholder);
  CHECK(find_node(state, "getitem_1")->op() == OpCode::placeholder);
  CHECK(find_node(state, "std_mean")->users().empty());  // left for dead-code elimination
  CHECK(state.loads == std::set<std::string, std::less<>>{"getitem", "getitem_1"});
  CHECK(input_count(state) == 2);
  CHECK(input_hash(state, "getitem_1") == state.eager->find("getitem_1")->storage.hash);
  CHECK(input_hash(state, "b") != input_hash(state, "getitem_1"));

  CHECK(eliminate_dead_code(state));
  CHECK(state.document.graph.find("std_mean") == nullptr);
}

TEST_CASE("placeholders, loads, the output and unstored values are never replaced", "[search]") {
  SearchState state = tup_use_case("a", "b");
  CHECK_FALSE(convert_to_loads(state, 0, 2));  // a, b
  REQUIRE(convert_to_loads(state, 5, 6));      // mul
  CHECK_FALSE(convert_to_loads(state, 5, 6));  // mul, a load now
  CHECK_FALSE(convert_to_loads(state, 7, 8));  // output

  SearchCase c;
  Node* x = c.input("x");
  // A view: propagate does not store it (it aliases x), and it is no tuple.
  Node* view = c.tuple_call("view", "aten::view", {NodeRef{x}, ListValue{{3}, false}});
  Node* relu = c.call("relu", "aten::relu", {NodeRef{view}});
  c.output(NodeRef{relu});
  SearchState aliased = c.build();
  CHECK_FALSE(convert_to_loads(aliased, 1, 2));
  CHECK(node_names(aliased) == std::vector<std::string>{"x", "view", "relu", "output"});
}

TEST_CASE("consolidation moves inputs first and binds each to its own tensor", "[search]") {
  SearchCase c;
  Node* x = c.input("x");
  Node* lead = c.load("lead");
  Node* sin = c.call("sin", "aten::sin", {NodeRef{x}});
  Node* y = c.input("y");
  Node* late = c.load("late");
  Node* mul = c.call("mul", "aten::mul.Tensor", {NodeRef{sin}, NodeRef{y}});
  Node* add = c.call("add", "aten::add.Tensor", {NodeRef{mul}, NodeRef{late}, NodeRef{lead}});
  c.output_tuple({add});
  SearchState state = c.build();
  std::map<std::string, std::string> hashes;
  for (const char* name : {"x", "lead", "y", "late"}) hashes[name] = input_hash(state, name);

  consolidate_placeholders(state);
  CHECK(document_problems(state.document).empty());
  CHECK(node_names(state) == std::vector<std::string>{"x", "lead", "y", "sin", "late", "mul", "add", "output"});
  CHECK(state.loads == std::set<std::string, std::less<>>{"late"});
  CHECK(input_count(state) == 3);
  for (const auto& [name, hash] : hashes) CHECK(input_hash(state, name) == hash);
}

TEST_CASE("dead loads go, dead inputs wait for remove_unused_inputs", "[search]") {
  SearchCase c;
  Node* x = c.input("x");
  c.input("unused");
  c.load("dead_load");
  Node* sin = c.call("sin", "aten::sin", {NodeRef{x}});
  c.output_tuple({sin});
  SearchState state = c.build();

  CHECK(eliminate_dead_code(state));
  CHECK(node_names(state) == std::vector<std::string>{"x", "unused", "sin", "output"});
  CHECK(state.loads.empty());
  CHECK(document_problems(state.document).empty());
  CHECK_FALSE(eliminate_dead_code(state));

  CHECK(remove_unused_inputs(state));
  CHECK(node_names(state) == std::vector<std::string>{"x", "sin", "output"});
  CHECK(document_problems(state.document).empty());
  CHECK_FALSE(remove_unused_inputs(state));
}

TEST_CASE("eager values come from propagate's reply, by node name", "[search]") {
  protocol::PropagatedValue relu{"relu", StorageRef{std::string(64, 'a'), 8, "cpu", std::nullopt},
                                 TensorMeta{0, DType::float32, {2}, {1}, 0, false}};
  EagerValueMap values = eager_values_from({relu});
  REQUIRE(values.count("relu") == 1);
  CHECK(values.at("relu").storage.hash == std::string(64, 'a'));
  CHECK(values.at("relu").tensor.shape == std::vector<std::int64_t>{2});
}

TEST_CASE("isolated nodes read loads of what they read from outside and return what no other of them reads",
          "[search]") {
  SearchCase c;
  Node* x = c.input("x");
  Node* mul = c.call("mul", "aten::mul.Tensor", {NodeRef{x}, 2.0});
  Node* sin = c.call("sin", "aten::sin", {NodeRef{mul}});
  Node* cos = c.call("cos", "aten::cos", {NodeRef{mul}});
  Node* relu = c.call("relu", "aten::relu", {NodeRef{sin}});
  Node* add = c.call("add", "aten::add.Tensor", {NodeRef{relu}, NodeRef{cos}});
  Node* neg = c.call("neg", "aten::neg", {NodeRef{add}});
  c.output_tuple({neg});
  SearchState state = c.build();

  // sin and relu, a kernel's nodes: sin reads mul's stored value, relu is returned; what comes after
  // and beside them goes, and names of no node of the graph are ignored.
  auto isolated = isolate_nodes(state, {"relu", "sin", "mul_99"});
  REQUIRE(isolated.has_value());
  CHECK(document_problems(isolated->document).empty());
  CHECK(node_names(*isolated) == std::vector<std::string>{"mul", "sin", "relu", "output"});
  CHECK(find_node(*isolated, "mul")->op() == OpCode::placeholder);
  CHECK(input_count(*isolated) == 1);  // the leading load became an input
  CHECK(input_hash(*isolated, "mul") == state.eager->find("mul")->storage.hash);
  CHECK(find_node(*isolated, "output")->args()[0].as<ListValue>().items.size() == 1);

  // Both branches: each returned, the shared input loaded once.
  isolated = isolate_nodes(state, {"sin", "cos"});
  REQUIRE(isolated.has_value());
  CHECK(node_names(*isolated) == std::vector<std::string>{"mul", "sin", "cos", "output"});
  CHECK(find_node(*isolated, "output")->args()[0].as<ListValue>().items.size() == 2);

  auto none = isolate_nodes(state, {"x", "mul_99"});
  REQUIRE_FALSE(none.has_value());
  CHECK(none.error().message == "the graph has no call_function node 'x', 'mul_99'");
}

TEST_CASE("an isolated tuple-valued node returns its getitems, which stay computed", "[search]") {
  SearchState state = tup_use_case("a", "b");
  auto isolated = isolate_nodes(state, {"std_mean", "mul"});
  REQUIRE(isolated.has_value());
  CHECK(document_problems(isolated->document).empty());
  CHECK(find_node(*isolated, "std_mean")->op() == OpCode::call_function);
  CHECK(find_node(*isolated, "getitem")->op() == OpCode::call_function);
  CHECK(find_node(*isolated, "mul")->op() == OpCode::call_function);
}
