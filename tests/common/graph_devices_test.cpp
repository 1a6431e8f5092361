// uses_cuda: a document touches CUDA through a storage on a CUDA device or an argument naming one,
// however deep in a list; a CPU document with `device=cpu` arguments does not.
#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>

#include "common/graph_codec.h"
#include "common/graph_devices.h"
#include "tests/support/sample_documents.h"

using namespace minifyd;

namespace {

bool uses_cuda_after(const std::function<void(nlohmann::json&)>& change) {
  nlohmann::json json = test::sample_document();
  change(json);
  auto document = decode_graph_document(json);
  REQUIRE(document.has_value());
  return uses_cuda(*document);
}

nlohmann::json& node_named(nlohmann::json& json, const std::string& name) {
  auto& nodes = json["nodes"];
  auto found = std::find_if(nodes.begin(), nodes.end(), [&](const nlohmann::json& node) { return node["name"] == name; });
  REQUIRE(found != nodes.end());
  return *found;
}

}  // namespace

TEST_CASE("a CPU document, device=cpu arguments included, uses no CUDA", "[graph_devices]") {
  CHECK_FALSE(uses_cuda_after([](nlohmann::json&) {}));
}

TEST_CASE("a storage on a CUDA device uses CUDA", "[graph_devices]") {
  CHECK(uses_cuda_after([](nlohmann::json& json) { json["storages"][1]["device"] = "cuda:1"; }));
}

TEST_CASE("a keyword argument naming a CUDA device uses CUDA", "[graph_devices]") {
  CHECK(uses_cuda_after([](nlohmann::json& json) { node_named(json, "to")["kwargs"]["device"] = {{"device", "cuda"}}; }));
}

TEST_CASE("a CUDA device inside a positional list uses CUDA", "[graph_devices]") {
  CHECK(uses_cuda_after([](nlohmann::json& json) {
    node_named(json, "cat")["args"][0].push_back(nlohmann::json{{"device", "cuda:0"}});
  }));
}
