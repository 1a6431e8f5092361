// Checkpoint files.
#include "daemon/run/checkpoint.h"

#include "common/file_util.h"
#include "common/graph_codec.h"
#include "protocol/json_fields.h"

namespace minifyd::run {
namespace {

constexpr protocol::DocumentFormat checkpoint_format{"minifyd.checkpoint", 1};

constexpr auto step_fields = [](auto& step, auto&& field) {
  field("strategy", step.strategy);
  field("granularity", step.granularity);
  field("queries", step.queries);
  protocol::graph_shape_fields(step.shape, field);
};

constexpr auto analysis_fields = [](auto& analysis, auto&& field) {
  field("first_divergence", analysis.first_divergence);
  field("requests", analysis.requests);
  field("seconds", analysis.seconds);
};

constexpr auto verdict_fields = [](auto& verdict, auto&& field) {
  field("hash", verdict.hash);
  field("fails", verdict.fails);
};

// Everything but the searched state, which is coded beside (its graph is read with the spec's operators).
constexpr auto checkpoint_fields = [](auto& checkpoint, auto&& field) {
  field("spec", checkpoint.spec);
  field("signature", checkpoint.signature);
  field("original_hash", checkpoint.original_hash);
  field("original", checkpoint.original);
  field("original_data", checkpoint.original_data);
  field("analysis", checkpoint.analysis);
  field("plain_check", checkpoint.plain_check);
  field("input_shrink", checkpoint.input_shrink);
  field("bisect", checkpoint.bisect);
  field("generated_code", checkpoint.generated_code);
  field("verdicts_key", checkpoint.verdicts_key);
  field("verdicts", checkpoint.verdicts);
  field("steps", checkpoint.steps);
  field("totals", checkpoint.totals);
  field("stop", checkpoint.stop);
  field("finished", checkpoint.finished);
};

// The state's graph, the nodes it loads, and the eager values once they have come (null before).
void encode_state(const search::SearchState& state, nlohmann::json& json) {
  nlohmann::json eager;
  const search::EagerValues* values = state.eager.get();
  if (values != nullptr && values->cover(state.document.graph)) {
    eager = nlohmann::json::array();
    for (const auto& [node, value] : values->all())
      eager.push_back(protocol::encode(protocol::PropagatedValue{node, value.storage, value.tensor}));
  }
  json["graph"] = encode_graph_document(state.document);
  json["loads"] = state.loads;
  json["eager"] = std::move(eager);
}

Expected<search::SearchState> decode_state(const JsonView& view, const OperatorScope& operators) {
  search::SearchState state;
  auto graph_view = view.field("graph");
  if (!graph_view) return graph_view.error();
  auto document = decode_graph_document(graph_view->raw(), operators);
  if (!document) return document.error().with_context("graph");
  state.document = std::move(*document);
  auto loads = view.for_each_item("loads", [&](const JsonView& item) -> Expected<void> {
    auto name = item.as_string();
    if (!name) return name.error();
    if (state.document.graph.find(*name) == nullptr) return item.error("'" + *name + "' is not a node of the graph");
    state.loads.insert(*name);
    return {};
  });
  if (!loads) return loads.error();
  auto eager_view = view.optional_field("eager");
  if (!eager_view) return eager_view.error();
  if (eager_view->has_value()) {
    std::vector<protocol::PropagatedValue> eager;
    if (auto read = view.append_items("eager", protocol::decode_propagated_value, eager); !read) return read.error();
    state.eager = std::make_shared<const search::EagerValues>(search::eager_values_from(eager));
  }
  return state;
}

}  // namespace

GraphShape shape_of(const search::SearchState& state) {
  return GraphShape{state.document.graph.size(), state.document.graph.placeholders().size(),
                    search::output_count(state.document.graph)};
}

nlohmann::json encode(const AcceptedStep& step) { return protocol::encode_fields(step, step_fields); }
Expected<void> decode(const JsonView& view, AcceptedStep& step) { return protocol::decode_fields(view, step, step_fields); }
nlohmann::json encode(const OriginalAnalysis& analysis) { return protocol::encode_fields(analysis, analysis_fields); }
Expected<void> decode(const JsonView& view, OriginalAnalysis& analysis) {
  return protocol::decode_fields(view, analysis, analysis_fields);
}
nlohmann::json encode(const CachedVerdict& verdict) { return protocol::encode_fields(verdict, verdict_fields); }
Expected<void> decode(const JsonView& view, CachedVerdict& verdict) {
  return protocol::decode_fields(view, verdict, verdict_fields);
}

nlohmann::json encode(const Checkpoint& checkpoint) {
  nlohmann::json json = protocol::encode_document(checkpoint, checkpoint_fields, checkpoint_format);
  encode_state(checkpoint.state, json);
  return json;
}

Expected<Checkpoint> decode_checkpoint(const nlohmann::json& json) {
  JsonView view(json);
  Checkpoint checkpoint;
  if (auto decoded = protocol::decode_document(view, checkpoint, checkpoint_fields, checkpoint_format); !decoded)
    return decoded.error();
  auto state = decode_state(view, checkpoint.spec.evaluation.operators());
  if (!state) return state.error();
  checkpoint.state = std::move(*state);
  std::vector<std::string> problems =
      document_problems(checkpoint.state.document, checkpoint.spec.evaluation.operators());
  if (!problems.empty()) return make_error(ErrorKind::corrupt, "graph: " + problems.front());
  return checkpoint;
}

Expected<void> write_checkpoint(const Checkpoint& checkpoint, const std::filesystem::path& out_dir) {
  return write_file_atomic(out_dir / checkpoint_file_name, encode(checkpoint).dump());
}

Expected<Checkpoint> read_checkpoint(const std::filesystem::path& out_dir) {
  std::filesystem::path path = out_dir / checkpoint_file_name;
  auto json = read_json_file(path);
  if (!json) return json.error();
  auto checkpoint = decode_checkpoint(*json);
  if (!checkpoint) return checkpoint.error().with_context(path.string());
  return checkpoint;
}

}  // namespace minifyd::run
