// Canonical form: nodes by position, constants by their tensor, storages renumbered by first use.
#include "common/canonical_hash.h"

#include <unordered_map>

#include <nlohmann/json.hpp>

#include "common/graph_codec.h"
#include "common/sha256.h"
#include "common/tensor_codec.h"

namespace minifyd {
namespace {

using nlohmann::json;

class Canonicalizer {
 public:
  explicit Canonicalizer(const GraphDocument& document) : document_(document) {}

  json form() {
    std::unordered_map<const Node*, std::size_t> positions;
    auto by_position = [&](const Node* node) { return json(positions.at(node)); };
    json nodes = json::array();
    std::size_t placeholder_index = 0;
    for (const Node* node : document_.graph.nodes()) {
      json entry = json::array({to_string(node->op())});
      switch (node->op()) {
        case OpCode::placeholder: entry.push_back(input(document_.inputs.at(placeholder_index++))); break;
        case OpCode::get_attr: entry.push_back(tensor(document_.constants.at(node->target()))); break;
        case OpCode::call_function: entry.push_back(node->target()); break;
        case OpCode::output: break;
      }
      json args = json::array();
      for (const Value& arg : node->args()) args.push_back(encode_value(arg, by_position));
      json kwargs = json::object();  // nlohmann orders object keys, so kwargs order is irrelevant
      for (const auto& [key, value] : node->kwargs()) kwargs[key] = encode_value(value, by_position);
      entry.push_back(std::move(args));
      entry.push_back(std::move(kwargs));
      nodes.push_back(std::move(entry));
      positions.emplace(node, positions.size());
    }
    return json{{"canonical", 1}, {"nodes", std::move(nodes)}};
  }

 private:
  json input(const GraphInput& graph_input) {
    const TensorMeta* meta = input_tensor(graph_input);
    return meta ? tensor(*meta) : encode_graph_input(graph_input);
  }

  json tensor(const TensorMeta& meta) {
    auto [it, inserted] = storage_numbers_.emplace(meta.storage, storage_numbers_.size());
    const StorageRef& storage = document_.storages.at(meta.storage);
    json encoded = encode_tensor_meta(meta);
    encoded["storage"] = it->second;
    if (inserted)
      encoded["storage_content"] = {storage.fill ? encode_storage_fill(*storage.fill) : json(storage.hash),
                                    storage.nbytes, storage.device};
    return encoded;
  }

  const GraphDocument& document_;
  std::unordered_map<std::size_t, std::size_t> storage_numbers_;
};

}  // namespace

std::string canonical_hash(const GraphDocument& document) {
  std::string form = Canonicalizer(document).form().dump();
  return sha256_hex(form.data(), form.size());
}

}  // namespace minifyd
