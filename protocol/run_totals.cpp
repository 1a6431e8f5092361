// Encoding and decoding of a run's figures.
#include "protocol/run_totals.h"

#include "protocol/json_fields.h"

namespace minifyd::protocol {
namespace {

constexpr auto plain_check_fields = [](auto& check, auto&& field) {
  field("outcome", check.outcome);
  field("detail", check.detail);
  field("seconds", check.seconds);
};

}  // namespace

nlohmann::json encode(const GraphShape& shape) { return encode_fields(shape, graph_shape_fields); }
Expected<void> decode(const JsonView& view, GraphShape& shape) { return decode_fields(view, shape, graph_shape_fields); }

nlohmann::json encode(const RunTotals& totals) { return encode_fields(totals, run_totals_fields); }
Expected<void> decode(const JsonView& view, RunTotals& totals) { return decode_fields(view, totals, run_totals_fields); }

nlohmann::json encode(const PlainCheck& check) { return encode_fields(check, plain_check_fields); }
Expected<void> decode(const JsonView& view, PlainCheck& check) { return decode_fields(view, check, plain_check_fields); }

nlohmann::json encode(const RunSummary& summary) { return encode_fields(summary, run_summary_fields); }
Expected<void> decode(const JsonView& view, RunSummary& summary) {
  return decode_fields(view, summary, run_summary_fields);
}

}  // namespace minifyd::protocol
