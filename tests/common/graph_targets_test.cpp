// The graph-target rule as every C++ loader applies it (Graph::lint, so `minify validate`, the
// coordinator's commands and jobs, and the C++ worker's decode): one test per refused entry of
// graph_targets.json, the namespaces, and the attribute-traversal targets that once ran code in
// the Python worker.
#include <catch2/catch.hpp>

#include "common/graph_codec.h"
#include "common/graph_targets.h"
#include "common/graph_targets_json.h"
#include "tests/support/sample_documents.h"

using nlohmann::json;

namespace {

const json& rule() {
  static const json parsed = json::parse(minifyd::graph_targets_json);
  return parsed;
}

// The sample document with node 'mm' calling target instead: the refusal names the node.
std::string decode_refusal(const std::string& target) {
  json document = minifyd::test::sample_document();
  for (json& node : document["nodes"])
    if (node["name"] == "mm") node["target"] = target;
  auto decoded = minifyd::decode_graph_document(document);
  REQUIRE_FALSE(decoded.has_value());
  return decoded.error().message;
}

}  // namespace

TEST_CASE("every operator the rule refuses is refused, with each overload, naming the node and the reason",
          "[graph_targets]") {
  REQUIRE(rule().at("refused").size() >= 9);
  for (const auto& [name, reason] : rule().at("refused").items()) {
    for (const std::string& target : {name, name + ".out", name + ".generator"}) {
      INFO(target);
      std::string message = decode_refusal(target);
      CHECK(message.find("node 'mm': ") != std::string::npos);
      CHECK(message.find("target '" + target + "' is refused: " + reason.get<std::string>()) != std::string::npos);
    }
  }
}

TEST_CASE("attribute traversal through torch.ops utilities is refused by namespace", "[graph_targets]") {
  for (const std::string target : {"load_library::__self__.load_library", "import_module::__self__.import_module",
                                   "builtins::eval", "torch::load"}) {
    INFO(target);
    std::string message = decode_refusal(target);
    CHECK(message.find("node 'mm'") != std::string::npos);
    CHECK(message.find("operators of the namespaces aten, prims, quantized only") != std::string::npos);
  }
}

TEST_CASE("the operator namespaces and the rule's listed operators are allowed", "[graph_targets]") {
  for (const char* target : {"aten::add.Tensor", "aten::mm", "prims::convert_element_type.default",
                             "quantized::add", "aten::from_filex", "profiler::_record_function_enter_new"})
    CHECK_FALSE(minifyd::operator_refusal(target).has_value());
  CHECK(minifyd::operator_refusal("profiler::start").has_value());
}
