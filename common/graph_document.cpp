// Consistency checks of a graph document that hold whoever built it: decoder, search or test.
#include "common/graph_document.h"

#include <limits>
#include <sstream>
#include <unordered_set>

namespace minifyd {
namespace {

std::string int_list(const std::vector<std::int64_t>& values) {
  std::ostringstream out;
  out << '[';
  for (std::size_t i = 0; i < values.size(); ++i) out << (i ? ", " : "") << values[i];
  out << ']';
  return out.str();
}

void check_tensor(const TensorMeta& tensor, const std::string& where,
                  const std::vector<StorageRef>& storages, std::vector<std::string>& problems) {
  if (tensor.storage >= storages.size()) {
    problems.push_back(where + ": storage: index " + std::to_string(tensor.storage) +
                       " is out of range (the document has " + std::to_string(storages.size()) +
                       " storages)");
    return;
  }
  std::string layout = "shape " + int_list(tensor.shape) + ", stride " + int_list(tensor.stride) +
                       ", storage_offset " + std::to_string(tensor.storage_offset) + ", " +
                       to_string(tensor.dtype);
  auto reached = bytes_reached(tensor);
  if (!reached) {
    problems.push_back(where + ": shape/stride/storage_offset are inconsistent (" + layout +
                       "): lengths must match and values be non-negative");
    return;
  }
  const StorageRef& storage = storages[tensor.storage];
  if (*reached > storage.nbytes)
    problems.push_back(where + ": tensor reaches byte " + std::to_string(*reached) + " of storage " +
                       std::to_string(tensor.storage) + ", which has " +
                       std::to_string(storage.nbytes) + " bytes (" + layout + ")");
}

}  // namespace

std::optional<std::uint64_t> bytes_reached(const TensorMeta& tensor) {
  if (tensor.shape.size() != tensor.stride.size() || tensor.storage_offset < 0) return std::nullopt;
  using u128 = unsigned __int128;
  u128 last = static_cast<u128>(tensor.storage_offset);
  bool empty = false;
  for (std::size_t i = 0; i < tensor.shape.size(); ++i) {
    if (tensor.shape[i] < 0 || tensor.stride[i] < 0) return std::nullopt;
    if (tensor.shape[i] == 0) empty = true;
    else last += static_cast<u128>(tensor.shape[i] - 1) * static_cast<u128>(tensor.stride[i]);
  }
  if (empty) return 0;
  u128 bytes = (last + 1) * itemsize(tensor.dtype);
  if (bytes > std::numeric_limits<std::uint64_t>::max()) return std::nullopt;
  return static_cast<std::uint64_t>(bytes);
}

std::vector<std::string> GraphDocument::blob_hashes() const {
  std::vector<std::string> hashes;
  std::unordered_set<std::string> seen;
  for (const StorageRef& storage : storages)
    if (seen.insert(storage.hash).second) hashes.push_back(storage.hash);
  return hashes;
}

std::vector<std::string> document_problems(const GraphDocument& document) {
  std::vector<std::string> problems;
  for (const LintError& error : document.graph.lint()) problems.push_back(error.to_string());

  std::size_t placeholders = document.graph.placeholders().size();
  if (placeholders != document.inputs.size())
    problems.push_back("inputs: the graph has " + std::to_string(placeholders) +
                       " placeholders but the document gives " +
                       std::to_string(document.inputs.size()) + " inputs");
  for (const Node* node : document.graph.nodes())
    if (node->op() == OpCode::get_attr && document.constants.count(node->target()) == 0)
      problems.push_back("node '" + node->name() + "': target: constant '" + node->target() +
                         "' is not in constants");

  for (std::size_t i = 0; i < document.inputs.size(); ++i)
    if (const TensorMeta* tensor = input_tensor(document.inputs[i]))
      check_tensor(*tensor, "inputs[" + std::to_string(i) + "]", document.storages, problems);
  for (const auto& [name, tensor] : document.constants)
    check_tensor(tensor, "constants." + name, document.storages, problems);
  return problems;
}

}  // namespace minifyd
