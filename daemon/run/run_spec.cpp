// Run specs as JSON.
#include "daemon/run/run_spec.h"

#include <tuple>

#include "common/number_range.h"
#include "common/sha256.h"

namespace minifyd::run {

nlohmann::json encode(const RunSpec& spec) {
  nlohmann::json json{{"graph_dir", spec.graph_dir},
                      {"evaluation", encode(spec.evaluation)},
                      {"match", to_string(spec.match)},
                      {"strategies", spec.strategies},
                      {"skip_sanity", spec.skip_sanity},
                      {"analyze", spec.analyze},
                      {"analyze_first", spec.analyze_first},
                      {"failing_kernel_first", spec.failing_kernel_first},
                      {"bisect_prefix", spec.bisect_prefix},
                      {"bisect", spec.bisect},
                      {"shrink_inputs", spec.shrink_inputs},
                      {"timeout_follows_original", spec.timeout_follows_original}};
  if (spec.max_granularity) json["max_granularity"] = *spec.max_granularity;
  if (spec.max_queries) json["max_queries"] = *spec.max_queries;
  if (spec.max_time_seconds) json["max_time_seconds"] = *spec.max_time_seconds;
  return json;
}

Expected<RunSpec> decode_run_spec(const JsonView& view) {
  RunSpec spec;
  if (auto read = view.read("graph_dir", spec.graph_dir); !read) return read.error();
  auto evaluation_view = view.field("evaluation");
  if (!evaluation_view) return evaluation_view.error();
  auto evaluation = verdict::decode_evaluation_spec(*evaluation_view);
  if (!evaluation) return evaluation.error();
  spec.evaluation = std::move(*evaluation);
  std::string match;
  if (auto read = view.read("match", match); !read) return read.error();
  auto mode = verdict::parse_match_mode(match);
  if (!mode) return view.error("match: " + mode.error().message);
  spec.match = *mode;
  auto strategies = view.for_each_item("strategies", [&](const JsonView& item) -> Expected<void> {
    auto name = item.as_string();
    if (!name) return name.error();
    spec.strategies.push_back(*name);
    return {};
  });
  if (!strategies) return strategies.error();
  if (auto read = view.read("skip_sanity", spec.skip_sanity); !read) return read.error();
  // Absent from the specs of runs begun before analyses, bisects, input shrinking, timeouts that follow the
  // original, the failing kernel's first try and the prefix bisection were added.
  for (auto [key, target] : {std::pair{"analyze", &spec.analyze}, std::pair{"analyze_first", &spec.analyze_first},
                             std::pair{"failing_kernel_first", &spec.failing_kernel_first},
                             std::pair{"bisect_prefix", &spec.bisect_prefix},
                             std::pair{"bisect", &spec.bisect}, std::pair{"shrink_inputs", &spec.shrink_inputs},
                             std::pair{"timeout_follows_original", &spec.timeout_follows_original}})
    if (auto read = view.read_optional(key, *target); !read) return read.error();
  for (auto [key, target, range] :
       {std::tuple{"max_granularity", &spec.max_granularity, number_ranges::max_granularity},
        std::tuple{"max_queries", &spec.max_queries, number_ranges::max_queries}}) {
    if (auto read = view.read_optional(key, *target); !read) return read.error();
    if (*target)
      if (auto checked = check_number(static_cast<double>(**target), range); !checked)
        return view.error(std::string(key) + ": " + checked.error().message);
  }
  if (auto read = view.read_optional("max_time_seconds", spec.max_time_seconds); !read) return read.error();
  if (spec.max_time_seconds)
    if (auto checked = check_number(*spec.max_time_seconds, number_ranges::max_time_seconds); !checked)
      return view.error("max_time_seconds: " + checked.error().message);
  return spec;
}

std::string evaluation_key(const RunSpec& spec) {
  // nlohmann::json orders object keys, so equal specs give equal text.
  std::string text = nlohmann::json{{"evaluation", encode(spec.evaluation)}, {"match", to_string(spec.match)}}.dump();
  return sha256_hex(text.data(), text.size());
}

}  // namespace minifyd::run
