// Run specs as JSON.
#include "daemon/run/run_spec.h"

#include <tuple>

#include "common/number_range.h"
#include "common/sha256.h"
#include "protocol/json_fields.h"

namespace minifyd::run {

namespace {

constexpr auto run_spec_fields = [](auto& spec, auto&& field) {
  field("graph_dir", spec.graph_dir);
  field("evaluation", spec.evaluation);
  field("match", spec.match);
  field("strategies", spec.strategies);
  field("skip_sanity", spec.skip_sanity);
  // Absent from the specs of runs begun before analyses, bisects, input shrinking, timeouts that follow the
  // original, the failing kernel's first try and the prefix bisection were added.
  field("analyze", spec.analyze, false);
  field("analyze_first", spec.analyze_first, false);
  field("failing_kernel_first", spec.failing_kernel_first, true);
  field("bisect_prefix", spec.bisect_prefix, true);
  field("bisect", spec.bisect, false);
  field("shrink_inputs", spec.shrink_inputs, false);
  field("timeout_follows_original", spec.timeout_follows_original, true);
  field("max_granularity", spec.max_granularity);
  field("max_queries", spec.max_queries);
  field("max_time_seconds", spec.max_time_seconds);
};

}  // namespace

nlohmann::json encode(const RunSpec& spec) { return protocol::encode_fields(spec, run_spec_fields); }

Expected<void> decode(const JsonView& view, RunSpec& spec) {
  if (auto decoded = protocol::decode_fields(view, spec, run_spec_fields); !decoded) return decoded;
  for (auto [key, value, range] :
       {std::tuple{"max_granularity", spec.max_granularity, number_ranges::max_granularity},
        std::tuple{"max_queries", spec.max_queries, number_ranges::max_queries}})
    if (value)
      if (auto checked = check_number(static_cast<double>(*value), range); !checked)
        return view.error(std::string(key) + ": " + checked.error().message);
  if (spec.max_time_seconds)
    if (auto checked = check_number(*spec.max_time_seconds, number_ranges::max_time_seconds); !checked)
      return view.error("max_time_seconds: " + checked.error().message);
  return {};
}


std::string evaluation_key(const RunSpec& spec) {
  // nlohmann::json orders object keys, so equal specs give equal text.
  std::string text = nlohmann::json{{"evaluation", encode(spec.evaluation)}, {"match", to_string(spec.match)}}.dump();
  return sha256_hex(text.data(), text.size());
}

}  // namespace minifyd::run
