// A graph document's tensors in graph.json (docs/graph-format.md, "Storages", "Filled storages",
// "Tensors", "SymInt inputs"): decoding validates and never throws, an error naming the field.
#pragma once

#include <nlohmann/json.hpp>

#include "common/expected.h"
#include "common/graph_document.h"
#include "common/json_view.h"

namespace minifyd {

nlohmann::json encode_tensor_meta(const TensorMeta& tensor);
nlohmann::json encode_storage_ref(const StorageRef& storage);
Expected<TensorMeta> decode_tensor_meta(const JsonView& view);
// A graph input: a tensor's metadata, or {"symint": VALUE}.
nlohmann::json encode_graph_input(const GraphInput& input);
Expected<GraphInput> decode_graph_input(const JsonView& view);
Expected<StorageRef> decode_storage_ref(const JsonView& view);
// A filled storage's "fill" member (docs/graph-format.md "Filled storages").
nlohmann::json encode_storage_fill(const StorageFill& fill);
Expected<StorageFill> decode_storage_fill(const JsonView& view);

}  // namespace minifyd
