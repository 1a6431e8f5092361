// What a minification run counted and where it ended, in one encoding for everyone who reports it:
// `minify run --json`, the daemon's result reply and a done job's end event (RunSummary, flat), and
// a checkpoint's "totals" and graph shapes (docs/cli.md, docs/daemon.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "common/expected.h"
#include "common/json_view.h"

namespace minifyd::protocol {

// A graph's size: {"nodes", "inputs", "outputs"}.
struct GraphShape {
  std::size_t nodes = 0;    // placeholders and the output node included, as PyTorch counts them
  std::size_t inputs = 0;   // placeholders, stored intermediates fed in place of nodes included
  std::size_t outputs = 0;  // leaves of the returned value
};
// Its field list (json_fields.h), which messages that carry a shape in their own object list too.
inline constexpr auto graph_shape_fields = [](auto& shape, auto&& field) {
  field("nodes", shape.nodes);
  field("inputs", shape.inputs);
  field("outputs", shape.outputs);
};
nlohmann::json encode(const GraphShape& shape);
Expected<void> decode(const JsonView& view, GraphShape& shape);

// Figures over every session of a run (a resumed run adds to them): {"queries", "cache_hits",
// "crashes_contained", "timeouts", "wall_seconds", "sessions"}.
struct RunTotals {
  std::uint64_t queries = 0;
  std::uint64_t cache_hits = 0;
  std::uint64_t crashes_contained = 0;
  std::uint64_t timeouts = 0;
  double wall_seconds = 0;
  std::uint64_t sessions = 0;
};
// Its field list, which a summary lists flat among its own.
inline constexpr auto run_totals_fields = [](auto& totals, auto&& field) {
  field("queries", totals.queries);
  field("cache_hits", totals.cache_hits);
  field("crashes_contained", totals.crashes_contained);
  field("timeouts", totals.timeouts);
  field("wall_seconds", totals.wall_seconds);
  field("sessions", totals.sessions);
};
nlohmann::json encode(const RunTotals& totals);
Expected<void> decode(const JsonView& view, RunTotals& totals);

// The original run the way its user meets the failure, outside minifyd's workers (docs/cli.md, "the
// plain check"): {"outcome", "detail", "seconds"}.
inline constexpr const char* plain_check_fails = "fails";      // the same kind of failure as the worker's
inline constexpr const char* plain_check_differs = "differs";  // another failure
inline constexpr const char* plain_check_passes = "passes";
inline constexpr const char* plain_check_skipped = "skipped";
struct PlainCheck {
  std::string outcome;  // one of the plain_check_* above
  std::string detail;   // how the repro ended (an exit status or signal, its last line), or why skipped
  double seconds = 0;
};
nlohmann::json encode(const PlainCheck& check);
Expected<void> decode(const JsonView& view, PlainCheck& check);

inline constexpr const char* run_status_minimized = "minimized";
inline constexpr const char* run_status_does_not_fail = "does_not_fail";

// How a run ended, as one flat object: the shape's and the totals' keys beside its own.
struct RunSummary {
  std::string status;  // run_status_minimized, or run_status_does_not_fail when the original passes
  std::string stop;    // why the search stopped: finished, query_budget, time_budget, interrupted, error, ...
  GraphShape shape;    // of the result
  std::size_t start_nodes = 0;   // of the original
  std::size_t start_inputs = 0;  // of the original
  RunTotals totals;
  // The last session's: its queries, its speculative lineages and the queries of those stopped
  // (work the search did not use, outside totals.queries).
  std::uint64_t session_queries = 0;
  std::uint64_t lineages = 0;
  std::uint64_t speculative_queries = 0;
  std::optional<std::string> failure;       // the original's failure in words, once checked
  std::optional<nlohmann::json> signature;  // the original's failure signature (as checkpoint.json's)
  std::optional<std::string> error;         // why the search stopped, when stop is error
  std::optional<PlainCheck> plain_check;    // the original under plain PyTorch, for the torch.compile backends
};
// Its field list, which a done job's result lists beside its report.
inline constexpr auto run_summary_fields = [](auto& summary, auto&& field) {
  field("status", summary.status);
  field("stop", summary.stop);
  graph_shape_fields(summary.shape, field);
  field("start_nodes", summary.start_nodes);
  field("start_inputs", summary.start_inputs);
  run_totals_fields(summary.totals, field);
  field("session_queries", summary.session_queries);
  field("lineages", summary.lineages);
  field("speculative_queries", summary.speculative_queries);
  field("failure", summary.failure);
  field("signature", summary.signature);
  field("error", summary.error);
  field("plain_check", summary.plain_check);
};
nlohmann::json encode(const RunSummary& summary);
// Errors name the bad field; keys it does not know (a reply's "out", an event's "job") are ignored.
Expected<void> decode(const JsonView& view, RunSummary& summary);

}  // namespace minifyd::protocol
