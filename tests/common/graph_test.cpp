// The graph IR: automatic user lists, erase refused while users remain, cloning, and lint.
#include <catch2/catch.hpp>

#include "common/graph.h"

using namespace minifyd;

namespace {

Node* add_node(Graph& graph, OpCode op, const std::string& name, const std::string& target = {},
               std::vector<Value> args = {}, Node* before = nullptr) {
  auto created = graph.create_node(op, name, target, std::move(args), {}, before);
  REQUIRE(created.has_value());
  return *created;
}

bool has_error(const std::vector<LintError>& errors, const std::string& node, const std::string& fragment) {
  for (const LintError& error : errors)
    if (error.node == node && error.message.find(fragment) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("users are kept automatically", "[graph]") {
  Graph graph;
  Node* x = add_node(graph, OpCode::placeholder, "x");
  Node* relu = add_node(graph, OpCode::call_function, "relu", "aten::relu", {NodeRef{x}});
  Node* mul = add_node(graph, OpCode::call_function, "mul", "aten::mul.Tensor", {NodeRef{relu}, NodeRef{relu}});
  Node* out = add_node(graph, OpCode::output, "output", {}, {ListValue{{NodeRef{mul}}, true}});
  CHECK(x->users() == std::vector<Node*>{relu});
  CHECK(relu->users() == std::vector<Node*>{mul});  // once, though referenced twice
  CHECK(mul->users() == std::vector<Node*>{out});
  CHECK(graph.lint().empty());

  graph.set_args(mul, {NodeRef{x}, NodeRef{relu}});
  CHECK(x->users() == std::vector<Node*>{relu, mul});

  graph.replace_all_uses_with(relu, x);
  CHECK(relu->users().empty());
  CHECK(mul->input_nodes() == std::vector<Node*>{x});
}

TEST_CASE("erase refuses while users remain and leaves the graph unchanged", "[graph]") {
  Graph graph;
  Node* x = add_node(graph, OpCode::placeholder, "x");
  Node* relu = add_node(graph, OpCode::call_function, "relu", "aten::relu", {NodeRef{x}});
  add_node(graph, OpCode::output, "output", {}, {NodeRef{relu}});

  auto refused = graph.erase_node(relu);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().message == "cannot erase node 'relu': it still has users 'output'");
  CHECK(graph.size() == 3);

  graph.set_args(graph.output(), {NodeRef{x}});
  REQUIRE(graph.erase_node(relu).has_value());
  CHECK(graph.size() == 2);
  CHECK(x->users() == std::vector<Node*>{graph.output()});
  CHECK(graph.find("relu") == nullptr);
  CHECK(graph.unique_name("relu") == "relu");
  CHECK(graph.unique_name("x") == "x_1");
}

TEST_CASE("create_node refuses a duplicate name", "[graph]") {
  Graph graph;
  add_node(graph, OpCode::placeholder, "x");
  auto duplicate = graph.create_node(OpCode::placeholder, "x", {});
  REQUIRE_FALSE(duplicate.has_value());
  CHECK(duplicate.error().message == "duplicate node name 'x'");
}

TEST_CASE("clone copies names and structure with fresh nodes", "[graph]") {
  Graph graph;
  Node* x = add_node(graph, OpCode::placeholder, "x");
  Node* relu = add_node(graph, OpCode::call_function, "relu", "aten::relu", {NodeRef{x}});
  add_node(graph, OpCode::output, "output", {}, {ListValue{{NodeRef{relu}, NodeRef{x}}, false}});
  Graph copy = graph.clone();
  REQUIRE(copy.size() == 3);
  Node* copied_relu = copy.find("relu");
  REQUIRE(copied_relu != nullptr);
  CHECK(copied_relu != relu);
  CHECK(copied_relu->args()[0].as<NodeRef>().node == copy.find("x"));
  CHECK(copy.find("x")->users() == std::vector<Node*>{copied_relu, copy.output()});
  CHECK(copy.lint().empty());

  Graph moved = std::move(copy);
  CHECK(moved.find("relu") == copied_relu);  // node pointers survive moves of the graph
}

TEST_CASE("lint names the node and the fix", "[graph]") {
  Graph graph;
  Node* x = add_node(graph, OpCode::placeholder, "x");
  Node* out = add_node(graph, OpCode::output, "output", {}, {NodeRef{x}});
  // Inserted before its input's user but after nothing it needs: fine. Inserted before x: not.
  add_node(graph, OpCode::call_function, "early", "aten::relu", {NodeRef{x}}, x);
  add_node(graph, OpCode::call_function, "bad_target", "relu", {NodeRef{x}}, out);
  add_node(graph, OpCode::call_function, "bad_getitem", "getitem", {NodeRef{x}}, out);
  add_node(graph, OpCode::get_attr, "no_target", "", {}, out);
  add_node(graph, OpCode::placeholder, "p", "", {NodeRef{x}}, out);

  auto errors = graph.lint();
  CHECK(has_error(errors, "early", "references node 'x' which does not come before it"));
  CHECK(has_error(errors, "bad_target", "target 'relu' is not an operator overload"));
  CHECK(has_error(errors, "bad_getitem", "getitem takes exactly (node, int index)"));
  CHECK(has_error(errors, "no_target", "target: \"\": a segment \"\" is not an identifier"));
  CHECK(has_error(errors, "p", "a placeholder takes no arguments"));
  CHECK(errors.size() == 5);
}

TEST_CASE("operator names follow c10's namespace::name.overload", "[graph]") {
  CHECK(is_operator_name("aten::add.Tensor"));
  CHECK(is_operator_name("aten::relu"));
  CHECK(is_operator_name("prims::convert_element_type"));
  CHECK(is_operator_name("aten::_native_batch_norm_legit.no_stats"));
  CHECK_FALSE(is_operator_name("aten.add.Tensor"));
  CHECK_FALSE(is_operator_name("aten::"));
  CHECK_FALSE(is_operator_name("aten::add."));
  CHECK_FALSE(is_operator_name("::add"));
  CHECK_FALSE(is_operator_name("aten::add.Tensor.out"));
}
