// `minify run GRAPH_DIR --out OUT_DIR --backend B ...`: minimize a failing graph, and
// `minify run --resume OUT_DIR`: continue a run that was killed.
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <thread>

#include <nlohmann/json.hpp>

#include "common/log.h"
#include "daemon/options/exit_codes.h"
#include "daemon/cli/commands.h"
#include "daemon/cli/graph_input.h"
#include "daemon/options/number_option.h"
#include "daemon/cli/search_spec_options.h"
#include "daemon/cli/progress_line.h"
#include "daemon/options/pool_options.h"
#include "daemon/cli/run_settings.h"
#include "daemon/run/out_dir_run.h"
#include "daemon/run/output_writer.h"
#include "daemon/run/run_summary.h"
#include "daemon/search/strategy_registry.h"
#include "protocol/daemon_replies.h"

namespace minifyd::cli {
namespace {

// Where `minify run FILE.py --out OUT` puts the graph it imports from FILE.py.
constexpr const char* imported_graph_dir_name = "original";

struct RunOptions {
  std::string dir;
  std::string out;
  std::string resume;
  // --resume takes these from the checkpoint instead.
  SearchSpecOptions search;
  options::PoolOptions pool;
  bool list_strategies = false;
  bool json = false;
  std::optional<unsigned> speculate_after_ms;  // nullopt: the run's default (out_dir_run.h)
  std::string timeline;  // --timeline FILE (run/timeline.h); empty: none
};

int fail(const std::string& message, int code, bool json) {
  if (json) std::cout << nlohmann::json{{"status", "error"}, {"error", message}}.dump() << "\n";
  else std::cerr << "minify run: " << message << "\n";
  return code;
}

int list_strategies() {
  for (const search::Strategy& strategy : search::all_strategies())
    std::cout << strategy.name << "\t" << strategy.summary << "\n";
  return options::exit_ok;
}

void print_summary(const run::RunResult& result, const std::filesystem::path& out) {
  const run::Checkpoint& checkpoint = result.checkpoint;
  const run::RunTotals& totals = checkpoint.totals;
  run::GraphShape shape = run::shape_of(checkpoint.state);
  std::printf("minimized: %zu -> %zu nodes, %zu inputs, in %llu queries (%llu cache hits, %llu crashes contained), %.1f s\n",
              checkpoint.original.nodes, shape.nodes, shape.inputs, static_cast<unsigned long long>(totals.queries),
              static_cast<unsigned long long>(totals.cache_hits),
              static_cast<unsigned long long>(totals.crashes_contained), totals.wall_seconds);
  if (checkpoint.signature) std::printf("failure: %s\n", describe(*checkpoint.signature).c_str());
  if (result.stop != search::StopReason::finished)
    std::printf("stopped early: %s%s\n", search::to_string(result.stop),
                result.error ? (": " + result.error->message).c_str() : "");
  std::printf("repro: %s\nreport: %s\ngraph: %s\n", (out / run::repro_file_name).c_str(),
              (out / run::report_file_name).c_str(), (out / "graph.json").c_str());
}

int run_command(RunOptions& options) {
  if (options.list_strategies) return list_strategies();
  bool resuming = !options.resume.empty();
  if (resuming) {
    for (const CLI::Option* option : options.search.registered)
      if (option->count() > 0)
        return fail("--resume continues with the settings saved in the checkpoint; " + option->get_name() +
                        " cannot be given with it",
                    options::exit_usage, options.json);
    if (!options.dir.empty() || !options.out.empty())
      return fail("--resume OUT_DIR takes neither GRAPH_DIR nor --out", options::exit_usage, options.json);
  } else if (options.dir.empty() || options.out.empty() || options.search.evaluation.backend.empty()) {
    return fail("GRAPH_DIR (or FILE.py), --out and --backend are required (or --resume OUT_DIR)", options::exit_usage, options.json);
  }

  std::unique_ptr<run::Timeline> timeline;
  if (!options.timeline.empty()) {
    auto opened = run::Timeline::open(options.timeline);
    if (!opened) return fail(opened.error().message, options::exit_usage, options.json);
    timeline = std::move(*opened);
  }
  // A resumed run takes its spec from the checkpoint.
  std::optional<run::RunSpec> spec;
  if (!resuming) {
    run::TimelinePhase importing(timeline.get(), "import");
    // A repro file is imported into the output directory (the import makes it), where a resumed run
    // still finds it.
    std::filesystem::path import_dir = std::filesystem::path(options.out) / imported_graph_dir_name;
    auto dir = graph_dir_of(options.dir, options.search.evaluation, import_dir);
    if (!dir) return fail(dir.error().message, options::exit_usage, options.json);
    auto made = options.search.spec(dir->string());
    if (!made) return fail(made.error().message, options::exit_usage, options.json);
    spec = std::move(*made);
  }

  auto made_settings = run_settings_of(options.pool, options.search.evaluation, resuming ? options.resume : options.out);
  if (!made_settings) return fail(made_settings.error().message, options::exit_usage, options.json);
  run::RunSettings settings = std::move(*made_settings);
  if (options.speculate_after_ms) settings.speculate_after = std::chrono::milliseconds(*options.speculate_after_ms);
  settings.timeline = timeline.get();
  // The live line replaces the info log on a terminal; --log-level debug (or a pipe) keeps the log.
  bool live = !options.json && ::isatty(STDERR_FILENO) && log::level() == log::Level::info;
  std::optional<ProgressLine> progress;
  if (live) {
    progress.emplace(stderr);
    settings.observer = &*progress;
    log::set_level(log::Level::warn);
  }

  Expected<run::RunResult> result = spec ? run::start_run(*spec, settings) : run::resume_run(settings);
  if (progress) progress->finish();
  if (!result) return fail(result.error().message, options::exit_code_of(result.error()), options.json);

  bool minimized = !search::nothing_to_minimize(result->stop);
  if (options.json) {
    // The daemon's result reply, for this output directory.
    std::cout << protocol::encode(protocol::ResultReply{run::summary_of(*result), settings.out_dir.string()}).dump()
              << "\n";
  } else if (!minimized) {
    std::cerr << "minify run: " << run::why_nothing_minimized(*result) << "\n";
  } else {
    print_summary(*result, settings.out_dir);
  }
  if (!minimized) return options::exit_does_not_fail;
  return result->stop == search::StopReason::error ? options::exit_worker_error : options::exit_ok;
}

}  // namespace

void add_run_command(CLI::App& app, Action& action) {
  auto options = std::make_shared<RunOptions>();
  CLI::App* command = app.add_subcommand("run", "Minimize a graph that fails, keeping the failure the same");
  add_graph_argument(*command, options->dir);
  command->add_option("--out", options->out, "output directory: graph.json, store/, repro.py, report.md, graph.dot");
  command->add_option("--resume", options->resume, "continue the run whose output directory this is");
  options->search.add_to(*command, /*backend_required=*/false);
  options->pool.add_to(*command);
  command->add_flag("--list-strategies", options->list_strategies, "list the strategies and exit");
  command->add_flag("--json", options->json, "print the summary as JSON");
  command->add_option("--speculate-after", options->speculate_after_ms,
                      "when a deciding verdict is pending this many ms, search on in parallel as if the candidate "
                      "fails (overlaps hangs and fills idle workers; the result is unchanged); 0: never; default 20")
      ->check(options::within(number_ranges::speculate_after_ms));
  command->add_option("--timeline", options->timeline,
                      "write FILE: one JSON line per worker start, request and phase of the run, as it happens "
                      "(bench/query_breakdown.py says where each query's time went)");
  command->callback([options, &action] { action = [options] { return run_command(*options); }; });
}

}  // namespace minifyd::cli
