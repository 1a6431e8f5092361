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

namespace {

// The sample document changed by `change`, decoded: the refusal's message.
template <class Change>
std::string refusal_of(Change change) {
  json document = minifyd::test::sample_document();
  change(document);
  auto decoded = minifyd::decode_graph_document(document);
  REQUIRE_FALSE(decoded.has_value());
  return decoded.error().message;
}

// Names that, unquoted in Python, are not one name: each the rule refuses wherever a name goes.
const std::vector<std::string> hostile_names = {
    "a'b", "a\"b", "a\\b", "a\nb", std::string("a\0b", 3), "a\u2028b", "a\u2029b", "class", "None", "1abc",
    "\u00e4", "", std::string(1025, 'a'), "__class__", "__init__", "X\") if 0 else x if open('m', 'w') is None else getattr(self, \"X",
    "alpha = 1)\nopen('m', 'w')\n_z = dict(a"};

}  // namespace

TEST_CASE("names follow the rule: ASCII identifiers, no Python keyword or special name, at most its length",
          "[graph_targets][names]") {
  const json& names = rule().at("names");
  CHECK(names.at("identifier") == "[A-Za-z_][A-Za-z0-9_]*");
  for (const auto& keyword : names.at("keywords")) CHECK(minifyd::name_refusal(keyword.get<std::string>()));
  for (const std::string& name : hostile_names) {
    INFO(json(name).dump());
    CHECK(minifyd::name_refusal(name));
    CHECK(minifyd::attribute_path_refusal(name));
    CHECK(minifyd::attribute_path_refusal("mod." + name));
  }
  const std::vector<std::string> allowed = {"x", "_tensor_constant0", "arg0_1", "L__self___fc", "match", "type",
                                            "__", "___", std::string(1024, 'a')};
  for (const std::string& name : allowed) CHECK_FALSE(minifyd::name_refusal(name));
  CHECK_FALSE(minifyd::attribute_path_refusal("L__self___layer1.weight"));
  CHECK(minifyd::attribute_path_refusal("layers.0.weight"));
  CHECK(minifyd::attribute_path_refusal("a..b"));
}

TEST_CASE("a document's node names, kwargs keys and constant names are refused by the rule, naming the field",
          "[graph_targets][names]") {
  for (const std::string& name : hostile_names) {
    INFO(json(name).dump());
    std::string node = refusal_of([&](json& document) {
      for (json& entry : document["nodes"])
        if (entry["name"] == "mm") entry["name"] = name;
    });
    CHECK(node.find("name: ") != std::string::npos);
    std::string key = refusal_of([&](json& document) {
      for (json& entry : document["nodes"])
        if (entry["name"] == "add") entry["kwargs"] = {{name, 2}};
    });
    CHECK(key.find("node 'add': kwargs: the key ") != std::string::npos);
    std::string constant = refusal_of([&](json& document) {
      json tensor = document["constants"]["_tensor_constant0"];
      document["constants"] = {{name, tensor}};
      for (json& entry : document["nodes"])
        if (entry["op"] == "get_attr") entry["target"] = name;
    });
    CHECK(constant.find("constants: the name ") != std::string::npos);
    // A refused name is quoted as JSON in the message: no line of it breaks.
    for (const std::string& message : {node, key, constant}) CHECK(message.find('\0') == std::string::npos);
    CHECK(key.find("\n_z") == std::string::npos);
  }
}
