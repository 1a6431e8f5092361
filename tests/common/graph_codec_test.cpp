// graph.json decoding and encoding: round trips, and every kind of bad document refused with an
// error naming the node and the field.
#include <catch2/catch.hpp>

#include <cmath>

#include "common/graph_codec.h"
#include "tests/support/sample_documents.h"

using minifyd::ErrorKind;
using minifyd::GraphDocument;
using nlohmann::json;

namespace {

// Decodes and requires a refusal whose message contains every fragment.
std::string refusal(const json& document, std::initializer_list<std::string> fragments) {
  auto decoded = minifyd::decode_graph_document(document);
  REQUIRE_FALSE(decoded.has_value());
  const std::string& message = decoded.error().message;
  INFO("message: " << message);
  for (const std::string& fragment : fragments) CHECK(message.find(fragment) != std::string::npos);
  return message;
}

json& node_named(json& document, const std::string& name) {
  for (json& node : document["nodes"])
    if (node["name"] == name) return node;
  throw std::logic_error("no node " + name);
}

}  // namespace

TEST_CASE("the sample document decodes with every value kind", "[graph_codec]") {
  auto decoded = minifyd::decode_graph_document(minifyd::test::sample_document());
  REQUIRE(decoded.has_value());
  const minifyd::Graph& graph = decoded->graph;
  CHECK(graph.size() == 11);
  CHECK(graph.placeholders().size() == 2);
  const minifyd::TensorMeta* second = minifyd::input_tensor(decoded->inputs[1]);
  REQUIRE(second != nullptr);
  CHECK(second->stride == std::vector<std::int64_t>{1, 3});
  CHECK(second->storage_offset == 6);

  const minifyd::Node* clamp = graph.find("clamp");
  REQUIRE(clamp != nullptr);
  CHECK(std::isinf(clamp->args()[1].as<double>()));
  CHECK(clamp->args()[1].as<double>() < 0);
  CHECK(clamp->args()[2].as<double>() == 10.0);

  const minifyd::Node* add = graph.find("add");
  CHECK(add->kwargs()[0].first == "alpha");
  CHECK(add->kwargs()[0].second.as<std::int64_t>() == 2);
  CHECK(graph.find("mm")->users() == std::vector<minifyd::Node*>{graph.find("add")});

  const auto& out = graph.output()->args()[0].as<minifyd::ListValue>();
  CHECK(out.is_tuple);
  CHECK(out.items[1].is<minifyd::NoneValue>());
  CHECK(std::isnan(out.items[4].as<double>()));
  // "to" is used twice by cat but counted once.
  CHECK(graph.find("to")->users().size() == 1);
}

TEST_CASE("encode then decode is the identity on the document", "[graph_codec]") {
  auto decoded = minifyd::decode_graph_document(minifyd::test::sample_document());
  REQUIRE(decoded.has_value());
  json encoded = minifyd::encode_graph_document(*decoded);
  auto again = minifyd::decode_graph_document(encoded);
  REQUIRE(again.has_value());
  CHECK(minifyd::encode_graph_document(*again) == encoded);
  // Floats stay floats and ints stay ints.
  CHECK(encoded["nodes"][7]["args"][2].is_number_float());
  CHECK(encoded["nodes"][5]["args"][1].is_number_integer());
}

TEST_CASE("unparseable JSON is refused with its byte offset", "[graph_codec][bad]") {
  auto decoded = minifyd::parse_graph_document("{\"format\": \"minifyd.graph\", \"version\": 1,");
  REQUIRE_FALSE(decoded.has_value());
  CHECK(decoded.error().kind == ErrorKind::invalid_input);
  CHECK(decoded.error().message.find("invalid JSON at byte") != std::string::npos);
}

TEST_CASE("a wrong or missing version is refused", "[graph_codec][bad]") {
  json document = minifyd::test::sample_document();
  document["version"] = 2;
  auto decoded = minifyd::decode_graph_document(document);
  REQUIRE_FALSE(decoded.has_value());
  CHECK(decoded.error().kind == ErrorKind::unsupported);
  CHECK(decoded.error().message.find("version: graph format version 2 is not supported") != std::string::npos);

  document.erase("version");
  refusal(document, {"missing field 'version'"});
  document["version"] = "1";
  refusal(document, {"version: expected an int, got a string"});
  document = minifyd::test::sample_document();
  document["format"] = "something.else";
  refusal(document, {"format:", "is not a minifyd graph"});
}

TEST_CASE("an unknown op kind is refused naming the node", "[graph_codec][bad]") {
  json document = minifyd::test::sample_document();
  node_named(document, "mm")["op"] = "call_everything";
  refusal(document, {"node 'mm' (nodes[3])", "op: unknown op kind 'call_everything'"});
  node_named(document, "mm")["op"] = "call_module";
  refusal(document, {"node 'mm' (nodes[3])", "call_module is not supported"});
}

TEST_CASE("a duplicate node name is refused", "[graph_codec][bad]") {
  json document = minifyd::test::sample_document();
  node_named(document, "add")["name"] = "mm";
  node_named(document, "max_1")["args"][0]["node"] = "mm";
  refusal(document, {"node 'mm' (nodes[4])", "name: duplicate node name 'mm'"});
}

TEST_CASE("a reference to an unknown node is refused", "[graph_codec][bad]") {
  json document = minifyd::test::sample_document();
  node_named(document, "add")["args"][0]["node"] = "mmm";
  refusal(document, {"node 'add' (nodes[4])", "args[0]: reference to unknown node 'mmm'"});
  node_named(document, "add")["args"][0]["node"] = "mm";
  node_named(document, "cat")["args"][0][1]["node"] = "nope";
  refusal(document, {"node 'cat'", "args[0][1]: reference to unknown node 'nope'"});
}

TEST_CASE("a reference to a later node (a cycle) is refused", "[graph_codec][bad]") {
  json document = minifyd::test::sample_document();
  node_named(document, "mm")["args"][1]["node"] = "add";  // mm -> add -> mm
  refusal(document, {"node 'mm' (nodes[3])", "args[1]: reference to node 'add' which comes later"});
  node_named(document, "mm")["args"][1]["node"] = "mm";
  refusal(document, {"node 'mm' (nodes[3])", "args[1]: node references itself"});
  node_named(document, "mm")["args"][1]["node"] = "arg1_1";
  node_named(document, "add")["kwargs"]["alpha"] = json{{"node", "to"}};
  refusal(document, {"node 'add'", "kwargs.alpha: reference to node 'to' which comes later"});
}

TEST_CASE("no output, or two outputs, is refused", "[graph_codec][bad]") {
  json document = minifyd::test::sample_document();
  json output = document["nodes"].back();
  document["nodes"].erase(document["nodes"].size() - 1);
  refusal(document, {"the graph has no output node"});

  document["nodes"].push_back(output);
  json second = output;
  second["name"] = "output_1";
  document["nodes"].push_back(second);
  refusal(document, {"node 'output': output must be the last node", "the graph has 2 output nodes"});
}

TEST_CASE("arguments of impossible types are refused naming the field", "[graph_codec][bad]") {
  json document = minifyd::test::sample_document();
  node_named(document, "clamp")["args"][1] = json{{"float", "huge"}};
  refusal(document, {"node 'clamp'", "args[1].float: 'huge' is not inf, -inf or nan"});

  document = minifyd::test::sample_document();
  node_named(document, "add")["args"][1] = json{{"complex", 1}};
  refusal(document, {"node 'add'", "args[1]: unknown value encoding 'complex'"});

  document = minifyd::test::sample_document();
  node_named(document, "add")["args"] = json{{"x", 1}};
  refusal(document, {"node 'add'", "args: expected an array, got an object"});

  document = minifyd::test::sample_document();
  node_named(document, "to")["kwargs"]["layout"] = json{{"layout", "diagonal"}};
  refusal(document, {"node 'to'", "kwargs.layout.layout: unknown layout 'diagonal'"});

  document = minifyd::test::sample_document();
  node_named(document, "to")["kwargs"]["device"] = json{{"device", "tpu:0"}};
  refusal(document, {"node 'to'", "kwargs.device.device: unknown device 'tpu:0'"});

  document = minifyd::test::sample_document();
  node_named(document, "max_1")["args"][1] = 18446744073709551615ull;
  refusal(document, {"node 'max_1'", "args[1]: integer 18446744073709551615 does not fit in 64 bits"});

  document = minifyd::test::sample_document();
  node_named(document, "getitem")["args"][1] = "zero";
  refusal(document, {"node 'getitem'", "getitem takes exactly (node, int index)"});

  document = minifyd::test::sample_document();
  node_named(document, "mm")["target"] = "torch.mm";
  refusal(document, {"node 'mm'", "target 'torch.mm' is not an operator overload"});

  document = minifyd::test::sample_document();
  node_named(document, "mm")["target"] = 7;
  refusal(document, {"node 'mm'", "target: expected a string, got an int"});
}

TEST_CASE("an input count different from the placeholder count is refused", "[graph_codec][bad]") {
  json document = minifyd::test::sample_document();
  document["inputs"].erase(1);
  refusal(document, {"inputs: the graph has 2 placeholders but the document gives 1 inputs"});
}

TEST_CASE("a get_attr of a missing constant is refused", "[graph_codec][bad]") {
  json document = minifyd::test::sample_document();
  document["constants"].erase("_tensor_constant0");
  refusal(document, {"node '_tensor_constant0'", "target: constant '_tensor_constant0' is not in constants"});
}

TEST_CASE("tensor metadata reaching past its storage is refused", "[graph_codec][bad]") {
  json document = minifyd::test::sample_document();
  // Last element at 7 + (3-1)*1 + (8-1)*3 = 30, so the tensor reads through byte 31*4 = 124.
  document["inputs"][1]["storage_offset"] = 7;
  document["inputs"][1]["shape"] = json{3, 8};
  refusal(document, {"inputs[1]: tensor reaches byte 124 of storage 0, which has 96 bytes",
                     "shape [3, 8], stride [1, 3], storage_offset 7, float32"});

  document = minifyd::test::sample_document();
  document["inputs"][0]["stride"] = json{3};
  refusal(document, {"inputs[0]: shape/stride/storage_offset are inconsistent"});

  document = minifyd::test::sample_document();
  document["inputs"][0]["shape"] = json{-2, 3};
  refusal(document, {"inputs[0]: shape/stride/storage_offset are inconsistent"});

  document = minifyd::test::sample_document();
  document["constants"]["_tensor_constant0"]["storage"] = 5;
  refusal(document, {"constants._tensor_constant0: storage: index 5 is out of range"});

  document = minifyd::test::sample_document();
  document["storages"][0]["hash"] = "xyz";
  refusal(document, {"storages[0].hash: 'xyz' is not a SHA-256 digest"});

  // A tensor with a zero-size dimension reaches nothing, whatever its offset.
  document = minifyd::test::sample_document();
  document["inputs"][0]["shape"] = json{0, 3};
  document["inputs"][0]["storage_offset"] = 1000;
  CHECK(minifyd::decode_graph_document(document).has_value());
}

TEST_CASE("an unknown dtype is refused naming the tensor and the field", "[graph_codec][bad]") {
  json document = minifyd::test::sample_document();
  document["inputs"][0]["dtype"] = "float8";
  refusal(document, {"inputs[0].dtype: unknown dtype 'float8'", "float32"});
  document = minifyd::test::sample_document();
  node_named(document, "to")["kwargs"]["dtype"] = json{{"dtype", "float128"}};
  refusal(document, {"node 'to'", "kwargs.dtype.dtype: unknown dtype 'float128'"});
}

TEST_CASE("a document that is not an object, or has no nodes, is refused", "[graph_codec][bad]") {
  refusal(json::array(), {"a graph document is a JSON object, got an array"});
  json document = minifyd::test::sample_document();
  document.erase("nodes");
  refusal(document, {"missing field 'nodes'"});
  document = minifyd::test::sample_document();
  document["nodes"][2] = 5;
  refusal(document, {"nodes[2]: expected a node object, got an int"});
  document = minifyd::test::sample_document();
  node_named(document, "add")["name"] = "1add";
  // Not an identifier: quoted as a JSON string, whatever it holds.
  refusal(document, {"node \"1add\" (nodes[4])", "name: \"1add\" is not an identifier"});
}
