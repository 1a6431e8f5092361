// What the input shrinking (`--shrink-inputs`, shrink/input_shrink.h) did to the minimized graph's data,
// as data: the stored bytes and the largest stored tensor before and after, each storage's fate and
// the requires_grad flags dropped. Kept in the run's checkpoint (so a daemon's job keeps it with its
// result) and rendered into report.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/expected.h"
#include "common/graph_document.h"
#include "common/json_view.h"

namespace minifyd::shrink {

// How much data a graph carries in the store.
struct DataSize {
  std::uint64_t stored_bytes = 0;  // of its stored storages (filled ones hold none)
  std::string largest;             // the tensor viewing the largest stored storage; "" when none is stored
  std::uint64_t largest_bytes = 0;
};

DataSize data_size(const GraphDocument& document);
// The first tensor viewing a storage: its name ("input add_42", "constant w") and metadata.
struct StorageViewer {
  std::string name;  // "" for a storage no tensor views
  const TensorMeta* tensor = nullptr;
};
// Each storage's first viewer, by storage index: inputs in placeholder order, then constants by name.
// The pointers are the document's.
std::vector<StorageViewer> storage_viewers(const GraphDocument& document);

// One stored storage, tried in place of its bytes.
struct StorageShrink {
  std::string tensor;  // the first tensor viewing it ("input add_42", "constant _tensor_constant0")
  std::uint64_t nbytes = 0;
  std::string replaced_by;            // describe() of its fill; "" when its stored values stay
  std::vector<std::string> refused;   // the fills tried under which the failure went away or changed
};

struct InputShrink {
  DataSize before, after;
  std::vector<StorageShrink> storages;
  std::vector<std::string> requires_grad_dropped;  // tensors whose requires_grad the failure does not need
  std::vector<std::string> requires_grad_kept;     // and those whose it does
  std::string shapes;  // why the shapes are as they were
  std::uint64_t queries = 0;
  double wall_seconds = 0;
  std::string error;  // why a shrinking after a run did not finish (the graph stays as minimized)
};

nlohmann::json encode(const DataSize& size);
Expected<void> decode(const JsonView& view, DataSize& size);
nlohmann::json encode(const StorageShrink& storage);
Expected<void> decode(const JsonView& view, StorageShrink& storage);
nlohmann::json encode(const InputShrink& shrink);
Expected<void> decode(const JsonView& view, InputShrink& shrink);

// "12.3 MB", "8192 B": a byte count for people.
std::string bytes_text(std::uint64_t bytes);
// report.md's section (## Smallest inputs); `original`, when known, is the original graph's data.
std::string render_markdown(const InputShrink& shrink, const DataSize* original);

}  // namespace minifyd::shrink
