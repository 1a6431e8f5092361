// The search options.
#include "daemon/cli/search_spec_options.h"

#include <filesystem>
#include <initializer_list>

#include "daemon/bisect/bisectable.h"
#include "daemon/cli/graph_input.h"
#include "daemon/options/number_option.h"

namespace minifyd::cli {

void SearchSpecOptions::add_to(CLI::App& command, bool backend_required) {
  evaluation.add_to(command, backend_required);
  registered.push_back(command.add_option("--match", match,
                                          "same: only the original's failure counts; any: every failure counts")
                           ->check(CLI::IsMember({"same", "any"})));
  registered.push_back(command.add_option("--strategies", strategies, "strategies to run (default: all)")->delimiter(','));
  registered.push_back(command.add_option("--max-granularity", max_granularity,
                                          "start each round at this granularity at most (a power of two)")
                           ->check(options::within(number_ranges::max_granularity)));
  registered.push_back(command.add_option("--max-queries", max_queries, "stop after this many queries")
                           ->check(options::within(number_ranges::max_queries)));
  registered.push_back(command.add_option("--max-time", max_time_seconds, "stop after this many seconds")
                           ->check(options::within(number_ranges::max_time_seconds)));
  struct Flag {
    const char* name;
    bool& value;
    const char* help;
  };
  for (const Flag& flag : std::initializer_list<Flag>{
           {"--skip-sanity", skip_sanity, "do not check first that the original fails (any failure then counts)"},
           {"--analyze", analyze,
            "analyze the original first (as minify analyze): analysis.md, analysis.json and analysis.svg go with "
            "the outputs"},
           {"--analyze-first", analyze_first,
            "first try the graph cut after the node where the compiled values first diverge (an in-place "
            "analysis, for --accuracy bugs)"},
           {"--no-failing-kernel-first", no_failing_kernel_first,
            "with Inductor, do not first try the nodes of the kernel that fails in the sanity check alone (the "
            "search starts from the whole graph)"},
           {"--no-prefix-bisection", no_prefix_bisection,
            "do not first bisect for the shortest failing prefix and try its last node alone (fx_minifier's "
            "schedule from the start)"},
           {"--bisect", bisect,
            "after the search, bisect the minimized graph's failure to the compiler's stage and subsystem "
            "(torch.compile backends; bisect.json, docs/bisect.md)"},
           {"--shrink-inputs", shrink_inputs,
            "after the search, replace the minimized graph's stored tensors by zeros, ones or seeded random "
            "values, and drop requires_grad, where it still fails the same way (report.md: Smallest inputs)"},
       })
    registered.push_back(command.add_flag(flag.name, flag.value, flag.help));
  for (const char* name : {"--backend", "--backend-opt", "--accuracy", "--strict-accuracy", "--nan", "--check-str",
                           "--timeout", "--cpu-limit", "--memory-limit"})
    registered.push_back(command.get_option(name));
}

Expected<run::RunSpec> SearchSpecOptions::spec(const std::string& graph_dir) const {
  run::RunSpec spec;
  spec.graph_dir = std::filesystem::absolute(graph_dir).lexically_normal().string();
  auto made = evaluation.spec();
  if (!made) return made.error();
  spec.evaluation = std::move(*made);
  if (auto added = add_origin_options(spec.evaluation, spec.graph_dir); !added) return added.error();
  auto mode = verdict::parse_match_mode(match);
  if (!mode) return mode.error().with_context("--match");
  spec.match = *mode;
  spec.strategies = strategies;
  if (max_granularity > 0) spec.max_granularity = max_granularity;
  spec.skip_sanity = skip_sanity;
  spec.analyze = analyze;
  spec.analyze_first = analyze_first;
  spec.failing_kernel_first = !no_failing_kernel_first;
  spec.bisect_prefix = !no_prefix_bisection;
  if (bisect)
    if (auto bisectable = bisect::bisectable_backend(spec.evaluation.backend); !bisectable)
      return bisectable.error().with_context("--bisect");
  spec.bisect = bisect;
  spec.shrink_inputs = shrink_inputs;
  spec.timeout_follows_original = !evaluation.timeout_seconds.has_value();
  if (max_queries > 0) spec.max_queries = max_queries;
  if (max_time_seconds > 0) spec.max_time_seconds = max_time_seconds;
  return spec;
}

}  // namespace minifyd::cli
