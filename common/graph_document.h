// A graph together with the tensors it needs: its inputs, its constants and the storages they view.
// This is what graph.json holds (docs/graph-format.md).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/dtype.h"
#include "common/graph.h"

namespace minifyd {

// How the bytes of a storage that is not stored are made (the input shrinking's replacements of a
// stored value, docs/graph-format.md "Filled storages"): every element of the storage, read as
// `dtype`, is 0, 1, or drawn from a CPU torch.Generator seeded with `seed`: uniform in [low, high)
// for a floating dtype, an integer in [low, high] for an integer or bool dtype. Each reader of the
// format (the C++ worker, graph_format.py and the repro.py that embeds it) draws the same values.
enum class FillKind { zeros, ones, random };

const char* to_string(FillKind kind);
std::optional<FillKind> parse_fill_kind(std::string_view name);

struct StorageFill {
  FillKind kind = FillKind::zeros;
  DType dtype = DType::float32;
  std::uint64_t seed = 0;           // random only
  double low = 0, high = 0;         // random only
};

// "zeros", "ones", "random in [-1.5, 2] (seed 0)", with the dtype.
std::string describe(const StorageFill& fill);
// What is wrong with a fill of a storage of `nbytes` bytes ("" when nothing is).
std::string fill_problem(const StorageFill& fill, std::uint64_t nbytes);

// A storage is an identity: tensors naming the same storage index are views of one storage. Its
// bytes are a blob of the content store, or made by `fill` (then `hash` is empty).
struct StorageRef {
  std::string hash;  // SHA-256 of the bytes, the blob name in the content store
  std::uint64_t nbytes = 0;
  std::string device = "cpu";
  std::optional<StorageFill> fill;

  bool stored() const { return !fill.has_value(); }
  // Its bytes made by `made_by` from now on: the blob is no longer its.
  void fill_with(const StorageFill& made_by) {
    fill = made_by;
    hash.clear();
  }
};

struct TensorMeta {
  std::size_t storage = 0;  // index into GraphDocument::storages
  DType dtype = DType::float32;
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> stride;
  std::int64_t storage_offset = 0;  // in elements
  bool requires_grad = false;
};

// One past the last byte of its storage that the tensor reads (0 when it has no elements);
// nullopt when shape/stride/offset are negative, mismatched in length, or overflow.
std::optional<std::uint64_t> bytes_reached(const TensorMeta& tensor);

// An int graph input that tensor shapes may depend on (a SymInt of a graph traced with dynamic
// shapes), with its value as exported. The search keeps every one: a graph whose shapes name a
// SymInt cannot run without it, even where no node uses it.
struct SymIntInput {
  std::int64_t value = 0;
};

// What a placeholder's value is: a tensor or a SymInt.
using GraphInput = std::variant<TensorMeta, SymIntInput>;

// The input's tensor, nullptr for a SymInt.
inline const TensorMeta* input_tensor(const GraphInput& input) { return std::get_if<TensorMeta>(&input); }
inline TensorMeta* input_tensor(GraphInput& input) { return std::get_if<TensorMeta>(&input); }

struct GraphDocument {
  Graph graph;
  std::vector<StorageRef> storages;
  std::vector<GraphInput> inputs;                 // the k-th placeholder's value is inputs[k]
  std::map<std::string, TensorMeta> constants;    // by get_attr target

  // Every blob hash the document references, each once, in storage order (filled storages have none).
  std::vector<std::string> blob_hashes() const;
};

// Everything wrong with a document beyond its JSON encoding: graph lint, input count, missing
// constants, storage indices, tensor bounds. Each message names the node or tensor and the field.
// `operators`: the namespaces the document's job adds to the rule's (graph_targets.h).
std::vector<std::string> document_problems(const GraphDocument& document, const OperatorScope& operators = {});

}  // namespace minifyd
