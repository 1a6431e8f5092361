// Consistency checks of a graph document that hold whoever built it: decoder, search or test.
#include "common/graph_document.h"

#include <cmath>
#include <limits>
#include <sstream>
#include <unordered_set>

#include "common/graph_targets.h"

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

bool is_integral(double value) { return std::isfinite(value) && std::floor(value) == value; }

}  // namespace

const char* to_string(FillKind kind) {
  switch (kind) {
    case FillKind::zeros: return "zeros";
    case FillKind::ones: return "ones";
    case FillKind::random: return "random";
  }
  return "?";
}

std::optional<FillKind> parse_fill_kind(std::string_view name) {
  for (FillKind kind : {FillKind::zeros, FillKind::ones, FillKind::random})
    if (name == to_string(kind)) return kind;
  return std::nullopt;
}

std::string describe(const StorageFill& fill) {
  std::ostringstream out;
  out << to_string(fill.kind);
  if (fill.kind == FillKind::random) out << " in [" << fill.low << ", " << fill.high << "]";
  out << " (" << to_string(fill.dtype);
  if (fill.kind == FillKind::random) out << ", seed " << fill.seed;
  out << ")";
  return out.str();
}

std::string fill_problem(const StorageFill& fill, std::uint64_t nbytes) {
  if (nbytes % itemsize(fill.dtype) != 0)
    return std::to_string(nbytes) + " bytes are not a whole number of " + to_string(fill.dtype) + " elements";
  if (fill.kind != FillKind::random) return "";
  if (is_complex(fill.dtype)) return "a random fill of a complex dtype is not defined (zeros or ones only)";
  if (!std::isfinite(fill.low) || !std::isfinite(fill.high) || fill.low > fill.high)
    return "random range [low, high] must be finite with low <= high";
  if (is_floating(fill.dtype)) return "";
  // Integers are drawn as int64 and converted: the bounds must be exact in a double and fit the dtype.
  constexpr double exact_limit = 9007199254740992.0;  // 2^53
  if (!is_integral(fill.low) || !is_integral(fill.high) || std::fabs(fill.low) > exact_limit ||
      std::fabs(fill.high) > exact_limit)
    return std::string("random range of ") + to_string(fill.dtype) + " must be integers of at most 2^53";
  if (fill.dtype == DType::bool_ && (fill.low < 0 || fill.high > 1)) return "random range of bool must be within [0, 1]";
  return "";
}

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
    if (storage.stored() && seen.insert(storage.hash).second) hashes.push_back(storage.hash);
  return hashes;
}

std::vector<std::string> document_problems(const GraphDocument& document, const OperatorScope& operators) {
  std::vector<std::string> problems;
  for (const LintError& error : document.graph.lint(operators)) problems.push_back(error.to_string());

  std::size_t placeholders = document.graph.placeholders().size();
  if (placeholders != document.inputs.size())
    problems.push_back("inputs: the graph has " + std::to_string(placeholders) +
                       " placeholders but the document gives " +
                       std::to_string(document.inputs.size()) + " inputs");
  for (const Node* node : document.graph.nodes())
    if (node->op() == OpCode::get_attr && document.constants.count(node->target()) == 0)
      problems.push_back("node " + node_label(node->name()) + ": target: constant " + node_label(node->target()) +
                         " is not in constants");

  for (std::size_t i = 0; i < document.storages.size(); ++i)
    if (const StorageRef& storage = document.storages[i]; storage.fill)
      if (std::string problem = fill_problem(*storage.fill, storage.nbytes); !problem.empty())
        problems.push_back("storages[" + std::to_string(i) + "]: fill: " + problem);
  for (std::size_t i = 0; i < document.inputs.size(); ++i)
    if (const TensorMeta* tensor = input_tensor(document.inputs[i]))
      check_tensor(*tensor, "inputs[" + std::to_string(i) + "]", document.storages, problems);
  for (const auto& [name, tensor] : document.constants) {
    if (auto refused = attribute_path_refusal(name)) {
      problems.push_back("constants: the name " + *refused);
      continue;
    }
    check_tensor(tensor, "constants." + name, document.storages, problems);
  }
  return problems;
}

}  // namespace minifyd
