// `minify query GRAPH_DIR --backend B`: run one graph once in a sandboxed worker and say whether
// it fails, and how, exactly as the search would see it.
#include <iostream>

#include <nlohmann/json.hpp>

#include "common/graph_codec.h"
#include "daemon/cli/cli.h"
#include "daemon/cli/commands.h"
#include "daemon/cli/evaluation_options.h"
#include "daemon/pool/pool_runner.h"
#include "daemon/query/verdict_of_outcome.h"

namespace minifyd::cli {
namespace {

struct QueryOptions {
  std::string dir;
  EvaluationOptions evaluation;
  bool json = false;
};

int fail_usage(const std::string& message, bool json) {
  if (json) std::cout << nlohmann::json{{"error", message}}.dump() << "\n";
  else std::cerr << "minify query: " << message << "\n";
  return exit_usage;
}

int query(const QueryOptions& options) {
  auto document = load_graph_dir(options.dir);
  if (!document) return fail_usage(document.error().message, options.json);
  auto spec = options.evaluation.spec();
  if (!spec) return fail_usage(spec.error().message, options.json);
  auto check = failure_check_of(*spec);
  if (!check) return fail_usage(check.error().message, options.json);
  auto worker = options.evaluation.worker_config();
  if (!worker) return fail_usage(worker.error().message, options.json);
  apply_limits(*spec, *worker);
  protocol::EvaluateRequest request =
      evaluate_request(*spec, *document, std::filesystem::absolute(std::filesystem::path(options.dir) / store_dir_name));

  PoolConfig pool_config{*worker, {PoolSlot{}}, /*warm_spares=*/false, 1};
  PoolRunner runner(std::move(pool_config));
  WorkerOutcome outcome = request_and_wait(runner.access(), std::move(request), spec->timeout);

  auto verdict = verdict_of(outcome);
  if (!verdict) {
    if (options.json) std::cout << nlohmann::json{{"error", verdict.error().message}}.dump() << "\n";
    else std::cerr << "minify query: " << verdict.error().message << "\n";
    return exit_worker_error;
  }
  bool fails = check->counts(*verdict);
  std::string line = protocol::describe(*verdict);
  if (!verdict->pass && !fails) line = "pass (" + line + ", which does not match --check-str)";
  if (options.json) {
    nlohmann::json result{{"fails", fails}, {"verdict", protocol::encode(*verdict)}, {"summary", line}};
    if (auto* reply = std::get_if<protocol::WorkerReply>(&outcome))
      if (auto* evaluated = std::get_if<protocol::EvaluateReply>(reply)) {
        result["compile_ms"] = evaluated->compile_ms;
        result["run_ms"] = evaluated->run_ms;
      }
    std::cout << result.dump() << "\n";
  } else {
    std::cout << line << "\n";
  }
  return fails ? exit_failed : exit_ok;
}

}  // namespace

void add_query_command(CLI::App& app, Action& action) {
  auto options = std::make_shared<QueryOptions>();
  CLI::App* command = app.add_subcommand("query", "Run a graph once in an isolated worker and report whether it fails");
  command->add_option("dir", options->dir, "graph directory (graph.json + store/)")->required();
  options->evaluation.add_to(*command);
  command->add_flag("--json", options->json, "print the verdict as JSON");
  command->callback([options, &action] { action = [options] { return query(*options); }; });
}

}  // namespace minifyd::cli
