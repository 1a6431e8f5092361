// graph_to_dot: one DOT node per graph node with the right label, edges in graph order, and names
// that DOT would misread (quotes, backslashes, newlines, control characters) escaped.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>

#include "common/graph_codec.h"
#include "common/graph_dot.h"
#include "tests/support/sample_documents.h"
#include "tests/support/temp_dir.h"

using namespace minifyd;

namespace {

Node* add_node(Graph& graph, OpCode op, const std::string& name, const std::string& target = {},
               std::vector<Value> args = {}, Kwargs kwargs = {}) {
  auto created = graph.create_node(op, name, target, std::move(args), std::move(kwargs));
  REQUIRE(created.has_value());
  return *created;
}

TensorMeta tensor(DType dtype, std::vector<std::int64_t> shape) {
  TensorMeta meta;
  meta.dtype = dtype;
  meta.shape = std::move(shape);
  meta.stride.assign(meta.shape.size(), 1);
  return meta;
}

bool contains(const std::string& text, const std::string& fragment) { return text.find(fragment) != std::string::npos; }

}  // namespace

TEST_CASE("every node, labelled by kind, and every reference as an edge in graph order", "[graph_dot]") {
  GraphDocument document;
  Graph& graph = document.graph;
  Node* x = add_node(graph, OpCode::placeholder, "x");
  Node* weight = add_node(graph, OpCode::get_attr, "weight", "layer.weight");
  Node* mm = add_node(graph, OpCode::call_function, "mm", "aten::mm", {NodeRef{x}, NodeRef{weight}});
  Node* relu = add_node(graph, OpCode::call_function, "relu", "aten::relu", {NodeRef{mm}});
  Node* cat = add_node(graph, OpCode::call_function, "cat", "aten::cat",
                       {ListValue{{NodeRef{relu}, NodeRef{mm}}, false}, -1});
  Node* add = add_node(graph, OpCode::call_function, "add", "aten::add.Tensor", {NodeRef{cat}, NodeRef{cat}},
                       {{"alpha", NodeRef{x}}});
  add_node(graph, OpCode::output, "output", {}, {ListValue{{NodeRef{add}}, true}});
  document.inputs.push_back(tensor(DType::float32, {2, 3}));
  document.constants["layer.weight"] = tensor(DType::float16, {3});

  CHECK(graph_to_dot(document) ==
        "digraph minifyd {\n"
        "  node [fontname=\"monospace\"];\n"
        "  \"x\" [label=\"x\\nfloat32[2, 3]\", shape=box, style=\"rounded,filled\", fillcolor=\"#cfe2f3\"];\n"
        "  \"weight\" [label=\"weight\\nfloat16[3]\\nlayer.weight\", shape=box, style=filled, fillcolor=\"#e6e6e6\"];\n"
        "  \"mm\" [label=\"mm\\naten::mm\", shape=ellipse];\n"
        "  \"relu\" [label=\"relu\\naten::relu\", shape=ellipse];\n"
        "  \"cat\" [label=\"cat\\naten::cat\", shape=ellipse];\n"
        "  \"add\" [label=\"add\\naten::add.Tensor\", shape=ellipse];\n"
        "  \"output\" [label=\"output\", shape=box, style=\"bold,filled\", fillcolor=\"#d9ead3\"];\n"
        "  \"x\" -> \"mm\" [label=\"0\"];\n"
        "  \"weight\" -> \"mm\" [label=\"1\"];\n"
        "  \"mm\" -> \"relu\";\n"
        "  \"relu\" -> \"cat\" [label=\"0[0]\"];\n"
        "  \"mm\" -> \"cat\" [label=\"0[1]\"];\n"
        "  \"cat\" -> \"add\" [label=\"0\"];\n"
        "  \"cat\" -> \"add\" [label=\"1\"];\n"
        "  \"x\" -> \"add\" [label=\"alpha\"];\n"
        "  \"add\" -> \"output\";\n"
        "}\n");
}

TEST_CASE("a decoded document renders the same text every time", "[graph_dot]") {
  auto first = decode_graph_document(test::sample_document());
  auto second = decode_graph_document(test::sample_document());
  REQUIRE(first.has_value());
  REQUIRE(second.has_value());
  std::string dot = graph_to_dot(*first);
  CHECK(dot == graph_to_dot(*second));
  CHECK(contains(dot, "\"arg1_1\" [label=\"arg1_1\\nfloat32[3, 2]\""));
  CHECK(contains(dot, "\"_tensor_constant0\" [label=\"_tensor_constant0\\nfloat32[]\""));
  CHECK(contains(dot, "\"max_1\" -> \"getitem\";\n"));
}

TEST_CASE("names and labels DOT would misread are escaped", "[graph_dot]") {
  GraphDocument document;
  Graph& graph = document.graph;
  Node* quote = add_node(graph, OpCode::placeholder, "say \"hi\"");
  Node* backslash = add_node(graph, OpCode::placeholder, "ends in \\");
  Node* newline = add_node(graph, OpCode::call_function, "two\nlines", "ns::op\\x", {NodeRef{quote}, NodeRef{backslash}});
  Node* control = add_node(graph, OpCode::call_function, std::string("nul\0tab\t", 8), "aten::relu", {NodeRef{newline}});
  add_node(graph, OpCode::output, "output", {}, {NodeRef{control}});
  std::string dot = graph_to_dot(document);

  CHECK(contains(dot, "  \"say \\\"hi\\\"\" [label=\"say \\\"hi\\\"\\ninput\""));
  CHECK(contains(dot, "  \"ends in \\\\\" [label=\"ends in \\\\\\ninput\""));
  CHECK(contains(dot, "  \"two\\nlines\" [label=\"two\\nlines\\nns::op\\\\x\""));
  CHECK(contains(dot, "  \"nul\\x00tab\\x09\" [label="));
  CHECK(contains(dot, "  \"say \\\"hi\\\"\" -> \"two\\nlines\" [label=\"0\"];\n"));
  CHECK(contains(dot, "  \"ends in \\\\\" -> \"two\\nlines\" [label=\"1\"];\n"));
  CHECK(contains(dot, "  \"nul\\x00tab\\x09\" -> \"output\";\n"));

  // Graphviz itself, where installed, must read it back with every node distinct.
  if (std::system("command -v dot >/dev/null 2>&1") != 0) return;
  test::TempDir dir;
  std::ofstream(dir / "graph.dot") << dot;
  std::string command = "dot -Tplain '" + (dir / "graph.dot").string() + "' > '" + (dir / "plain").string() + "'";
  REQUIRE(std::system(command.c_str()) == 0);
  std::ifstream plain(dir / "plain");
  std::string line;
  int nodes = 0, edges = 0;
  while (std::getline(plain, line)) {
    if (line.rfind("node ", 0) == 0) ++nodes;
    if (line.rfind("edge ", 0) == 0) ++edges;
  }
  CHECK(nodes == 5);
  CHECK(edges == 4);
}
