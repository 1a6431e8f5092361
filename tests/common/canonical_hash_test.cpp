// The canonical hash ignores names and layout and sees every change of structure or content.
#include <catch2/catch.hpp>

#include "common/canonical_hash.h"
#include "common/graph_codec.h"
#include "tests/support/sample_documents.h"

using nlohmann::json;

namespace {

std::string hash_of(const json& document) {
  auto decoded = minifyd::decode_graph_document(document);
  INFO((decoded ? std::string() : decoded.error().message));
  REQUIRE(decoded.has_value());
  return minifyd::canonical_hash(*decoded);
}

// Renames a node everywhere it is mentioned (its definition and every {"node": name}).
void rename_node(json& value, const std::string& from, const std::string& to) {
  if (value.is_object()) {
    if (value.contains("node") && value["node"] == from) value["node"] = to;
    if (value.contains("name") && value["name"] == from) value["name"] = to;
    for (auto& [key, item] : value.items()) rename_node(item, from, to);
  } else if (value.is_array()) {
    for (json& item : value) rename_node(item, from, to);
  }
}

}  // namespace

TEST_CASE("renaming nodes and constants keeps the hash", "[canonical_hash]") {
  json original = minifyd::test::sample_document();
  json renamed = original;
  rename_node(renamed, "mm", "matmul_17");
  rename_node(renamed, "arg0_1", "primals_1");
  rename_node(renamed, "_tensor_constant0", "const_x");
  renamed["nodes"][2]["target"] = "weight";
  renamed["constants"] = json{{"weight", original["constants"]["_tensor_constant0"]}};
  CHECK(hash_of(renamed) == hash_of(original));
}

TEST_CASE("reordering the storages table keeps the hash", "[canonical_hash]") {
  json original = minifyd::test::sample_document();
  json reordered = original;
  std::swap(reordered["storages"][0], reordered["storages"][1]);
  for (json& input : reordered["inputs"]) input["storage"] = 1;
  reordered["constants"]["_tensor_constant0"]["storage"] = 0;
  CHECK(hash_of(reordered) == hash_of(original));
}

TEST_CASE("any change of structure, arguments, metadata or content changes the hash", "[canonical_hash]") {
  json original = minifyd::test::sample_document();
  std::string base = hash_of(original);
  std::vector<std::function<void(json&)>> changes = {
      [](json& d) { d["nodes"][3]["target"] = "aten::matmul"; },
      [](json& d) { d["nodes"][4]["kwargs"]["alpha"] = 3; },
      [](json& d) { d["nodes"][4]["kwargs"]["alpha"] = 2.0; },
      [](json& d) { d["nodes"][7]["args"][2] = 11.0; },
      [](json& d) { d["nodes"][8]["kwargs"]["dtype"]["dtype"] = "bfloat16"; },
      [](json& d) { d["storages"][0]["hash"] = std::string(64, 'c'); },
      [](json& d) { d["storages"][0]["device"] = "cuda:0"; },
      [](json& d) { d["inputs"][1]["storage_offset"] = 5; },
      [](json& d) { d["inputs"][0]["requires_grad"] = true; },
      // The same bytes in a separate storage is no longer a view of one storage.
      [](json& d) {
        d["storages"].push_back(d["storages"][0]);
        d["inputs"][1]["storage"] = 2;
      },
      [](json& d) { std::swap(d["nodes"][0], d["nodes"][1]); },
  };
  for (std::size_t i = 0; i < changes.size(); ++i) {
    json changed = original;
    changes[i](changed);
    INFO("change " << i);
    CHECK(hash_of(changed) != base);
  }
}
