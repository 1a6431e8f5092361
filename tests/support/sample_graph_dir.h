// Writes small real graph directories (graph.json + store) for end-to-end tests without Python.
#pragma once

#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "common/content_store.h"
#include "common/graph_codec.h"

namespace minifyd::test {

// 32 floats, some negative: sin(i) * 3.
inline std::vector<float> sample_values() {
  std::vector<float> values(32);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = std::sin(static_cast<float>(i)) * 3.0f;
  return values;
}

// A graph directory whose one input is float32[4, 8] holding `values` (32 of them); `build` adds
// the nodes after the placeholder "x" (it gets x) and must end with the output node.
inline std::filesystem::path write_graph_dir(const std::filesystem::path& dir,
                                             const std::function<void(Graph&, Node* x)>& build,
                                             const std::vector<float>& values = sample_values()) {
  REQUIRE(values.size() == 32);
  auto store = ContentStore::open(dir / store_dir_name, true);
  REQUIRE(store.has_value());
  auto hash = store->put(values.data(), values.size() * sizeof(float));
  REQUIRE(hash.has_value());
  GraphDocument document;
  document.storages = {{*hash, values.size() * sizeof(float), "cpu", std::nullopt}};
  document.inputs = {TensorMeta{0, DType::float32, {4, 8}, {8, 1}, 0, false}};
  build(document.graph, *document.graph.create_node(OpCode::placeholder, "x", ""));
  INFO((document_problems(document).empty() ? "" : document_problems(document).front()));
  REQUIRE(document_problems(document).empty());
  REQUIRE(write_graph_json(document, dir).has_value());
  REQUIRE(store->write_root("graph", document.blob_hashes()).has_value());
  return dir;
}

// x -> OP (aten::relu or another unary op) -> mul by 2.0 -> output.
inline std::filesystem::path write_unary_graph(const std::filesystem::path& dir, const std::string& op) {
  return write_graph_dir(dir, [&](Graph& graph, Node* x) {
    Node* unary = *graph.create_node(OpCode::call_function, "unary", op, {NodeRef{x}});
    Node* mul = *graph.create_node(OpCode::call_function, "mul", "aten::mul.Tensor", {NodeRef{unary}, 2.0});
    REQUIRE(graph.create_node(OpCode::output, "output", "", {ListValue{{NodeRef{mul}}, true}}).has_value());
  });
}

}  // namespace minifyd::test
