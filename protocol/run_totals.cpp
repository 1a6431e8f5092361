// Encoding and decoding of a run's figures.
#include "protocol/run_totals.h"

#include "protocol/json_fields.h"

namespace minifyd::protocol {
namespace {

constexpr auto totals_fields = [](auto& totals, auto&& field) {
  field("queries", totals.queries);
  field("cache_hits", totals.cache_hits);
  field("crashes_contained", totals.crashes_contained);
  field("timeouts", totals.timeouts);
  field("wall_seconds", totals.wall_seconds);
  field("sessions", totals.sessions);
};

constexpr auto plain_check_fields = [](auto& check, auto&& field) {
  field("outcome", check.outcome);
  field("detail", check.detail);
  field("seconds", check.seconds);
};

constexpr auto summary_fields = [](auto& summary, auto&& field) {
  field("status", summary.status);
  field("stop", summary.stop);
  graph_shape_fields(summary.shape, field);
  field("start_nodes", summary.start_nodes);
  field("start_inputs", summary.start_inputs);
  totals_fields(summary.totals, field);
  field("session_queries", summary.session_queries);
  field("lineages", summary.lineages);
  field("speculative_queries", summary.speculative_queries);
  field("failure", summary.failure);
  field("signature", summary.signature);
  field("error", summary.error);
  field("plain_check", summary.plain_check);
};

}  // namespace

nlohmann::json encode(const GraphShape& shape) { return encode_fields(shape, graph_shape_fields); }
Expected<void> decode(const JsonView& view, GraphShape& shape) { return decode_fields(view, shape, graph_shape_fields); }

nlohmann::json encode(const RunTotals& totals) { return encode_fields(totals, totals_fields); }
Expected<void> decode(const JsonView& view, RunTotals& totals) { return decode_fields(view, totals, totals_fields); }

nlohmann::json encode(const PlainCheck& check) { return encode_fields(check, plain_check_fields); }
Expected<void> decode(const JsonView& view, PlainCheck& check) { return decode_fields(view, check, plain_check_fields); }

nlohmann::json encode(const RunSummary& summary) { return encode_fields(summary, summary_fields); }
Expected<void> decode(const JsonView& view, RunSummary& summary) {
  return decode_fields(view, summary, summary_fields);
}

}  // namespace minifyd::protocol
