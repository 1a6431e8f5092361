// `minify query GRAPH_DIR --backend B`: run one graph once in a sandboxed worker and say whether
// it fails, and how, exactly as the search would see it.
#include <iostream>
#include <optional>

#include <nlohmann/json.hpp>

#include "common/graph_codec.h"
#include "daemon/options/exit_codes.h"
#include "daemon/cli/commands.h"
#include "daemon/cli/daemon_options.h"
#include "daemon/options/evaluation_options.h"
#include "daemon/cli/graph_input.h"
#include "daemon/cli/query_output.h"
#include "daemon/pool/command_pool.h"
#include "daemon/pool/local_pool.h"
#include "daemon/pool/request_batch.h"
#include "daemon/verdict/query_result.h"

namespace minifyd::cli {
namespace {

struct QueryOptions {
  std::string dir;
  options::EvaluationOptions evaluation;
  bool json = false;
  bool through_daemon = false;  // --daemon
  DaemonOptions daemon;
};

// The same query on one of the daemon's workers, sharing its pool with the daemon's jobs.
int query_through_daemon(QueryOptions options, const verdict::EvaluationSpec& spec) {
  options.daemon.json = options.json;
  auto client = options.daemon.connect();
  if (!client) return options.daemon.fail("query", client.error());
  std::filesystem::path dir = std::filesystem::absolute(options.dir).lexically_normal();
  auto reply = client->ask(protocol::QueryRequest{dir.string(), encode(spec)});
  if (!reply) return options.daemon.fail("query", reply.error());
  return print_query_result(reply->result, options.json);
}

int fail_usage(const std::string& message, bool json) {
  if (json) std::cout << nlohmann::json{{"error", message}}.dump() << "\n";
  else std::cerr << "minify query: " << message << "\n";
  return options::exit_usage;
}

int query(QueryOptions options) {
  if (options.through_daemon)
    if (auto refused = options.evaluation.no_sandbox_for_daemon(); !refused)
      return fail_usage(refused.error().message, options.json);
  std::optional<TemporaryDirectory> imported;
  auto dir = graph_dir_importing_to_temporary(options.dir, options.evaluation, imported);
  if (!dir) return fail_usage(dir.error().message, options.json);
  options.dir = dir->string();
  auto spec = options.evaluation.spec();
  if (!spec) return fail_usage(spec.error().message, options.json);
  auto document = load_graph_dir(options.dir, spec->operators());
  if (!document) return fail_usage(document.error().message, options.json);
  if (auto added = add_origin_options(*spec, options.dir); !added) return fail_usage(added.error().message, options.json);
  auto check = verdict::failure_check_of(*spec);
  if (!check) return fail_usage(check.error().message, options.json);
  if (options.through_daemon) return query_through_daemon(options, *spec);
  auto pool_config = pool::command_pool_config(spec->backend, options.evaluation.worker_programs(),
                                               options.evaluation.sandbox, *document);
  if (!pool_config) return fail_usage(pool_config.error().message, options.json);
  protocol::EvaluateRequest request =
      verdict::evaluate_request(*spec, *document, std::filesystem::absolute(std::filesystem::path(options.dir) / store_dir_name));

  // One request: no spare worker, and a worker that cannot start is the answer.
  pool_config->warm_spares = false;
  pool_config->max_start_failures = 1;
  pool::LocalPool runner(std::move(*pool_config));
  pool::WorkerOutcome outcome = pool::RequestBatch(runner.access()).ask(std::move(request), spec->timeout);

  auto result = verdict::query_result(outcome, *check);
  if (!result) {
    if (options.json) std::cout << nlohmann::json{{"error", result.error().message}}.dump() << "\n";
    else std::cerr << "minify query: " << result.error().message << "\n";
    return options::exit_code_of(result.error());
  }
  return print_query_result(*result, options.json);
}

}  // namespace

void add_query_command(CLI::App& app, Action& action) {
  auto options = std::make_shared<QueryOptions>();
  CLI::App* command = app.add_subcommand("query", "Run a graph once in an isolated worker and report whether it fails");
  add_graph_argument(*command, options->dir)->required();
  options->evaluation.add_to(*command);
  command->add_flag("--json", options->json, "print the verdict as JSON");
  command->add_flag("--daemon", options->through_daemon, "run it on a worker of the running minifyd");
  options->daemon.add_to(*command, /*with_json=*/false);
  command->callback([options, &action] { action = [options] { return query(*options); }; });
}

}  // namespace minifyd::cli
