// graph.json <-> GraphDocument (docs/graph-format.md). Decoding validates everything and never
// throws: a bad document is an invalid_input error naming the node and the field.
#pragma once

#include <filesystem>
#include <functional>
#include <string_view>

#include <nlohmann/json.hpp>

#include "common/expected.h"
#include "common/graph_document.h"
#include "common/json_view.h"

namespace minifyd {

inline constexpr int graph_format_version = 1;
inline constexpr const char* graph_format_name = "minifyd.graph";
inline constexpr const char* graph_file_name = "graph.json";
inline constexpr const char* store_dir_name = "store";

// `operators`: the namespaces the document's job adds to the rule's (graph_targets.h); a graph calling
// another namespace is refused.
Expected<GraphDocument> decode_graph_document(const nlohmann::json& json, const OperatorScope& operators = {});
Expected<GraphDocument> parse_graph_document(std::string_view text, const OperatorScope& operators = {});
// Reads DIR/graph.json; errors are prefixed with the file's path.
Expected<GraphDocument> load_graph_dir(const std::filesystem::path& dir, const OperatorScope& operators = {});

nlohmann::json encode_graph_document(const GraphDocument& document);
// Writes DIR/graph.json atomically (the store is the caller's business).
Expected<void> write_graph_json(const GraphDocument& document, const std::filesystem::path& dir);

// The JSON encoding of one argument value; node references are encoded by encode_node, so the
// same encoder serves the document ({"node": name}) and the canonical hash ({"node": index}).
nlohmann::json encode_value(const Value& value,
                            const std::function<nlohmann::json(const Node*)>& encode_node);

}  // namespace minifyd
