// `minify bisect GRAPH --backend inductor`: which stage and subsystem of the compiler a failing
// graph's failure comes from (bisect/bisector.h), on a pool of warm, sandboxed workers.
#include <cstdio>
#include <iostream>
#include <optional>

#include <nlohmann/json.hpp>

#include "common/graph_codec.h"
#include "common/temporary_directory.h"
#include "daemon/bisect/bisectable.h"
#include "daemon/bisect/bisector.h"
#include "daemon/options/exit_codes.h"
#include "daemon/cli/commands.h"
#include "daemon/options/evaluation_options.h"
#include "daemon/cli/graph_input.h"
#include "daemon/options/pool_options.h"
#include "daemon/pool/command_pool.h"
#include "daemon/pool/local_pool.h"

namespace minifyd::cli {
namespace {

struct BisectOptions {
  std::string dir;
  options::EvaluationOptions evaluation;
  options::PoolOptions pool;
  std::string match = "same";
  bool json = false;
};

int fail(const std::string& message, int code, bool json) {
  if (json) std::cout << nlohmann::json{{"error", message}}.dump() << "\n";
  else std::cerr << "minify bisect: " << message << "\n";
  return code;
}

void print_result(const bisect::BisectResult& result) {
  std::printf("stage: %s\n", result.stage.c_str());
  if (!result.subsystem.empty()) std::printf("subsystem: %s\n", result.subsystem.c_str());
  if (result.application) std::printf("application: %llu\n", static_cast<unsigned long long>(*result.application));
  if (!result.debug_info.empty()) std::printf("debug info: %s\n", result.debug_info.c_str());
  if (!result.target.empty()) std::printf("operator: %s\n", result.target.c_str());
  for (const std::string& toggle : result.fixed_by) std::printf("gone with: %s\n", toggle.c_str());
  for (const std::string& note : result.notes) std::printf("note: %s\n", note.c_str());
  std::printf("%zu probes, %.1f s\n", result.probes.size(), result.wall_seconds);
}

int bisect_command(BisectOptions& options) {
  std::optional<TemporaryDirectory> imported;
  auto dir = graph_dir_importing_to_temporary(options.dir, options.evaluation, imported);
  if (!dir) return fail(dir.error().message, options::exit_usage, options.json);
  auto spec = options.evaluation.spec();
  if (!spec) return fail(spec.error().message, options::exit_usage, options.json);
  auto document = load_graph_dir(*dir, spec->operators());
  if (!document) return fail(document.error().message, options::exit_usage, options.json);
  if (auto bisectable = bisect::bisectable_backend(spec->backend); !bisectable)
    return fail(bisectable.error().message, options::exit_usage, options.json);
  if (auto added = add_origin_options(*spec, *dir); !added) return fail(added.error().message, options::exit_usage, options.json);
  auto check = verdict::failure_check_of(*spec);
  if (!check) return fail(check.error().message, options::exit_usage, options.json);
  auto match = verdict::parse_match_mode(options.match);
  if (!match) return fail(match.error().message, options::exit_usage, options.json);
  auto slots = options.pool.slots();
  if (!slots) return fail(slots.error().message, options::exit_usage, options.json);
  auto pool_config = pool::command_pool_config(spec->backend, options.evaluation.worker_programs(),
                                               options.evaluation.sandbox, *document, std::move(*slots));
  if (!pool_config) return fail(pool_config.error().message, options::exit_usage, options.json);
  pool::LocalPool runner(std::move(*pool_config));
  verdict::FailureJudge judge(std::move(*check), *match);
  auto result = bisect::bisect(runner.access(), *spec, *document, std::filesystem::absolute(*dir / store_dir_name), judge);
  if (!result) {
    int code = result.error().kind == ErrorKind::invalid_input ? options::exit_does_not_fail : options::exit_code_of(result.error());
    return fail(result.error().message, code, options.json);
  }
  if (options.json) std::cout << bisect::encode(*result).dump() << "\n";
  else print_result(*result);
  return options::exit_ok;
}

}  // namespace

void add_bisect_command(CLI::App& app, Action& action) {
  auto options = std::make_shared<BisectOptions>();
  CLI::App* command = app.add_subcommand(
      "bisect", "Find the compiler stage and subsystem a failing graph's failure comes from (torch.compile backends)");
  add_graph_argument(*command, options->dir)->required();
  options->evaluation.add_to(*command);
  options->pool.add_to(*command);
  command->add_option("--match", options->match, "same: a probe shows the failure only with the graph's signature; "
                                                  "any: every failure counts")
      ->check(CLI::IsMember({"same", "any"}));
  command->add_flag("--json", options->json, "print bisect.json's content");
  command->callback([options, &action] { action = [options] { return bisect_command(*options); }; });
}

}  // namespace minifyd::cli
