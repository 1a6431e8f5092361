// Writes a small real graph directory (graph.json + store) for end-to-end tests without Python:
// x: float32[4, 8] -> OP (aten::relu or another unary op) -> mul by 2.0 -> output.
#pragma once

#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "common/content_store.h"
#include "common/graph_codec.h"

namespace minifyd::test {

inline std::filesystem::path write_unary_graph(const std::filesystem::path& dir, const std::string& op) {
  auto store = ContentStore::open(dir / store_dir_name, true);
  REQUIRE(store.has_value());
  std::vector<float> values(32);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = std::sin(static_cast<float>(i)) * 3.0f;
  auto hash = store->put(values.data(), values.size() * sizeof(float));
  REQUIRE(hash.has_value());
  GraphDocument document;
  document.storages = {{*hash, values.size() * sizeof(float), "cpu"}};
  document.inputs = {{0, DType::float32, {4, 8}, {8, 1}, 0, false}};
  Graph& graph = document.graph;
  Node* x = *graph.create_node(OpCode::placeholder, "x", "");
  Node* unary = *graph.create_node(OpCode::call_function, "unary", op, {NodeRef{x}});
  Node* mul = *graph.create_node(OpCode::call_function, "mul", "aten::mul.Tensor", {NodeRef{unary}, 2.0});
  REQUIRE(graph.create_node(OpCode::output, "output", "", {ListValue{{NodeRef{mul}}, true}}).has_value());
  REQUIRE(document_problems(document).empty());
  REQUIRE(write_graph_json(document, dir).has_value());
  REQUIRE(store->write_root("graph", document.blob_hashes()).has_value());
  return dir;
}

}  // namespace minifyd::test
