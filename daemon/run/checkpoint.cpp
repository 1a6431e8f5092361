// Checkpoint files.
#include "daemon/run/checkpoint.h"

#include "common/file_util.h"
#include "common/graph_codec.h"
#include "protocol/json_fields.h"

namespace minifyd::run {
namespace {

constexpr const char* checkpoint_format = "minifyd.checkpoint";
constexpr int checkpoint_version = 1;

Expected<Checkpoint> decode_fields(const nlohmann::json& json) {
  JsonView view(json);
  std::string format;
  std::int64_t version = 0;
  if (auto read = view.read("format", format); !read) return read.error();
  if (auto read = view.read("version", version); !read) return read.error();
  if (format != checkpoint_format || version != checkpoint_version)
    return view.error("format: '" + format + "' version " + std::to_string(version) + " is not " +
                      checkpoint_format + " version " + std::to_string(checkpoint_version));
  Checkpoint checkpoint;
  auto spec_view = view.field("spec");
  if (!spec_view) return spec_view.error();
  auto spec = decode_run_spec(*spec_view);
  if (!spec) return spec.error();
  checkpoint.spec = std::move(*spec);

  auto signature_view = view.optional_field("signature");
  if (!signature_view) return signature_view.error();
  if (signature_view->has_value()) {
    auto signature = verdict::decode_failure_signature(**signature_view);
    if (!signature) return signature.error();
    checkpoint.signature = std::move(*signature);
  }
  if (auto read = view.read("original_hash", checkpoint.original_hash); !read) return read.error();
  auto original_view = view.field("original");
  if (!original_view) return original_view.error();
  auto original = protocol::decode_message<GraphShape>(*original_view);
  if (!original) return original.error();
  checkpoint.original = *original;

  auto graph_view = view.field("graph");
  if (!graph_view) return graph_view.error();
  auto document = decode_graph_document(graph_view->raw(), checkpoint.spec.evaluation.operators());
  if (!document) return document.error().with_context("graph");
  checkpoint.state.document = std::move(*document);
  auto loads = view.for_each_item("loads", [&](const JsonView& item) -> Expected<void> {
    auto name = item.as_string();
    if (!name) return name.error();
    if (checkpoint.state.document.graph.find(*name) == nullptr)
      return item.error("'" + *name + "' is not a node of the graph");
    checkpoint.state.loads.insert(*name);
    return {};
  });
  if (!loads) return loads.error();
  auto eager_view = view.optional_field("eager");
  if (!eager_view) return eager_view.error();
  if (eager_view->has_value()) {
    std::vector<protocol::PropagatedValue> eager;
    auto read = view.append_items("eager", protocol::decode_propagated_value, eager);
    if (!read) return read.error();
    checkpoint.state.eager = std::make_shared<const search::EagerValues>(search::eager_values_from(eager));
  }
  auto analysis_view = view.optional_field("analysis");
  if (!analysis_view) return analysis_view.error();
  if (analysis_view->has_value()) {
    const JsonView& analysis = **analysis_view;
    OriginalAnalysis found;
    if (auto read = analysis.read_optional("first_divergence", found.first_divergence); !read) return read.error();
    if (auto read = analysis.read("requests", found.requests); !read) return read.error();
    if (auto read = analysis.read("seconds", found.seconds); !read) return read.error();
    checkpoint.analysis = std::move(found);
  }

  if (auto read = view.read("verdicts_key", checkpoint.verdicts_key); !read) return read.error();
  auto verdicts = view.for_each_item("verdicts", [&](const JsonView& item) -> Expected<void> {
    std::string hash;
    bool fails = false;
    if (auto read = item.read("hash", hash); !read) return read.error();
    if (auto read = item.read("fails", fails); !read) return read.error();
    checkpoint.verdicts.emplace_back(std::move(hash), fails);
    return {};
  });
  if (!verdicts) return verdicts.error();
  auto steps = view.for_each_item("steps", [&](const JsonView& item) -> Expected<void> {
    AcceptedStep step;
    if (auto read = item.read("strategy", step.strategy); !read) return read.error();
    if (auto read = item.read("granularity", step.granularity); !read) return read.error();
    if (auto read = item.read("queries", step.queries); !read) return read.error();
    auto shape = protocol::decode_message<GraphShape>(item);
    if (!shape) return shape.error();
    step.shape = *shape;
    checkpoint.steps.push_back(std::move(step));
    return {};
  });
  if (!steps) return steps.error();
  if (auto read = protocol::decode_optional_member(view, "original_data", checkpoint.original_data); !read)
    return read.error();
  if (auto read = protocol::decode_optional_member(view, "input_shrink", checkpoint.input_shrink); !read)
    return read.error();
  if (auto read = protocol::decode_optional_member(view, "bisect", checkpoint.bisect); !read) return read.error();
  if (auto read = protocol::decode_optional_member(view, "generated_code", checkpoint.generated_code); !read)
    return read.error();
  if (auto read = protocol::decode_optional_member(view, "plain_check", checkpoint.plain_check); !read)
    return read.error();
  auto totals_view = view.field("totals");
  if (!totals_view) return totals_view.error();
  auto totals = protocol::decode_message<RunTotals>(*totals_view);
  if (!totals) return totals.error();
  checkpoint.totals = *totals;
  if (auto read = view.read("stop", checkpoint.stop); !read) return read.error();
  if (auto read = view.read("finished", checkpoint.finished); !read) return read.error();
  return checkpoint;
}

}  // namespace

GraphShape shape_of(const search::SearchState& state) {
  return GraphShape{state.document.graph.size(), state.document.graph.placeholders().size(),
                    search::output_count(state.document.graph)};
}

nlohmann::json encode(const Checkpoint& checkpoint) {
  nlohmann::json eager;  // null until those of the state came
  const search::EagerValues* values = checkpoint.state.eager.get();
  if (values != nullptr && values->cover(checkpoint.state.document.graph)) {
    eager = nlohmann::json::array();
    for (const auto& [node, value] : values->all())
      eager.push_back(protocol::encode(protocol::PropagatedValue{node, value.storage, value.tensor}));
  }
  nlohmann::json verdicts = nlohmann::json::array();
  for (const auto& [hash, fails] : checkpoint.verdicts) verdicts.push_back({{"hash", hash}, {"fails", fails}});
  nlohmann::json steps = nlohmann::json::array();
  for (const AcceptedStep& step : checkpoint.steps) {
    nlohmann::json json = protocol::encode(step.shape);
    json["strategy"] = step.strategy;
    json["granularity"] = step.granularity;
    json["queries"] = step.queries;
    steps.push_back(std::move(json));
  }
  nlohmann::json analysis;
  if (checkpoint.analysis)
    analysis = {{"first_divergence", checkpoint.analysis->first_divergence ? nlohmann::json(*checkpoint.analysis->first_divergence)
                                                                          : nlohmann::json()},
                {"requests", checkpoint.analysis->requests},
                {"seconds", checkpoint.analysis->seconds}};
  nlohmann::json json{{"format", checkpoint_format},
                      {"version", checkpoint_version},
                      {"spec", encode(checkpoint.spec)},
                      {"signature", checkpoint.signature ? encode(*checkpoint.signature) : nlohmann::json()},
                      {"original_hash", checkpoint.original_hash},
                      {"original", protocol::encode(checkpoint.original)},
                      {"original_data", checkpoint.original_data ? shrink::encode(*checkpoint.original_data) : nlohmann::json()},
                      {"graph", encode_graph_document(checkpoint.state.document)},
                      {"loads", checkpoint.state.loads},
                      {"eager", std::move(eager)},
                      {"analysis", analysis},
                      {"plain_check", checkpoint.plain_check ? protocol::encode(*checkpoint.plain_check) : nlohmann::json()},
                      {"input_shrink", checkpoint.input_shrink ? shrink::encode(*checkpoint.input_shrink) : nlohmann::json()},
                      {"bisect", checkpoint.bisect ? bisect::encode(*checkpoint.bisect) : nlohmann::json()},
                      {"generated_code", checkpoint.generated_code ? encode(*checkpoint.generated_code) : nlohmann::json()},
                      {"verdicts_key", checkpoint.verdicts_key},
                      {"verdicts", std::move(verdicts)},
                      {"steps", std::move(steps)},
                      {"totals", protocol::encode(checkpoint.totals)},
                      {"stop", checkpoint.stop},
                      {"finished", checkpoint.finished}};
  return json;
}

Expected<Checkpoint> decode_checkpoint(const nlohmann::json& json) {
  auto checkpoint = decode_fields(json);
  if (!checkpoint) return checkpoint.error();
  std::vector<std::string> problems =
      document_problems(checkpoint->state.document, checkpoint->spec.evaluation.operators());
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
