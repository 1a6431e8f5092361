// `minify analyze GRAPH_DIR --backend B`: where the compiled graph's values first diverge from
// eager's, read node by node in isolation and in place, and whether they are deterministic
// (docs/analyze.md). Writes analysis.md, analysis.json and analysis.svg into --out.
#include <iostream>
#include <optional>

#include <nlohmann/json.hpp>

#include "common/content_store.h"
#include "common/graph_codec.h"
#include "daemon/analysis/analysis_files.h"
#include "daemon/analysis/analysis_requests.h"
#include "daemon/options/exit_codes.h"
#include "daemon/cli/commands.h"
#include "daemon/options/evaluation_options.h"
#include "daemon/cli/graph_input.h"
#include "daemon/options/pool_options.h"
#include "daemon/pool/command_pool.h"
#include "daemon/pool/local_pool.h"
#include "daemon/run/minification.h"

namespace minifyd::cli {
namespace {

struct AnalyzeOptions {
  std::string dir;
  options::EvaluationOptions evaluation;
  options::PoolOptions pool;
  std::string out = "analysis";
  std::string mode = "both";
  bool json = false;
};

int fail(int code, const std::string& message, bool json) {
  if (json) std::cout << nlohmann::json{{"error", message}}.dump() << "\n";
  else std::cerr << "minify analyze: " << message << "\n";
  return code;
}

std::vector<analysis::Mode> modes_of(const std::string& mode) {
  if (mode == "isolated") return {analysis::Mode::isolated};
  if (mode == "in-place") return {analysis::Mode::in_place};
  return {analysis::Mode::isolated, analysis::Mode::in_place};
}

// The original's blobs copied into a store of the analysis's own, which the intermediates join.
Expected<std::filesystem::path> scratch_store(const GraphDocument& original, const std::filesystem::path& graph_dir,
                                              const std::filesystem::path& scratch) {
  auto store = ContentStore::open(scratch / store_dir_name, true);
  if (!store) return store.error();
  auto source = ContentStore::open(graph_dir / store_dir_name, false);
  if (!source) return source.error().with_context("reading " + graph_dir.string());
  run::RunPlace place{std::move(*store), "analysis", {}, {}, {}};
  if (auto imported = run::import_original(original, *source, place); !imported)
    return imported.error().with_context("importing " + graph_dir.string());
  return scratch / store_dir_name;
}

void print_summary(const analysis::Findings& findings, const std::filesystem::path& out, bool json) {
  if (json) {
    std::cout << nlohmann::json{{"out", out.string()},
                                {"first_divergence", findings.first_divergence ? nlohmann::json(*findings.first_divergence)
                                                                               : nlohmann::json()},
                                {"fusion", findings.fusion.has_value()},
                                {"compiled_deterministic", findings.compiled_nondeterministic.empty()},
                                {"fp64_deterministic", findings.fp64_nondeterministic.empty()},
                                {"failed_nodes", findings.failed_nodes}}
                     .dump()
              << "\n";
    return;
  }
  std::cout << (findings.first_divergence ? "first divergence: node '" + *findings.first_divergence + "'"
                                          : std::string("no divergence"))
            << (findings.fusion ? " (the modes disagree: " + *findings.fusion + ")" : std::string()) << "\n"
            << "compiled graph " << (findings.compiled_nondeterministic.empty() ? "deterministic" : "NONDETERMINISTIC")
            << ", fp64 reference " << (findings.fp64_nondeterministic.empty() ? "deterministic" : "NONDETERMINISTIC")
            << "; " << findings.failed_nodes << " node(s) failed\n"
            << "wrote " << (out / analysis::analysis_markdown_name).string() << "\n";
}

int analyze(AnalyzeOptions options) {
  std::optional<TemporaryDirectory> imported;
  auto dir = graph_dir_importing_to_temporary(options.dir, options.evaluation, imported);
  if (!dir) return fail(options::exit_usage, dir.error().message, options.json);
  auto spec = options.evaluation.spec();
  if (!spec) return fail(options::exit_usage, spec.error().message, options.json);
  auto document = load_graph_dir(*dir, spec->operators());
  if (!document) return fail(options::exit_usage, document.error().message, options.json);
  if (auto added = add_origin_options(*spec, *dir); !added) return fail(options::exit_usage, added.error().message, options.json);
  auto slots = options.pool.slots();
  if (!slots) return fail(options::exit_usage, slots.error().message, options.json);
  auto pool_config = pool::command_pool_config(spec->backend, options.evaluation.worker_programs(),
                                               options.evaluation.sandbox, *document, std::move(*slots));
  if (!pool_config) return fail(options::exit_usage, pool_config.error().message, options.json);
  pool::LocalPool runner(std::move(*pool_config));

  auto scratch = TemporaryDirectory::create("minify-analyze");
  if (!scratch) return fail(options::exit_usage, scratch.error().message, options.json);
  auto store = scratch_store(*document, *dir, scratch->path());
  if (!store) return fail(options::exit_usage, store.error().message, options.json);
  analysis::AnalysisPlan plan{*spec, modes_of(options.mode)};
  auto result = analysis::run_analysis(*document, std::filesystem::absolute(*store), plan, runner.access());
  if (!result) return fail(options::exit_code_of(result.error()), result.error().message, options.json);

  analysis::Findings findings = analysis::findings_of(*result);
  std::filesystem::path out = std::filesystem::absolute(options.out);
  std::string title = "`" + std::filesystem::path(options.dir).filename().string() + "`";
  auto written = analysis::write_analysis_files(out, *result, findings, title);
  if (!written) return fail(options::exit_usage, written.error().message, options.json);
  if (*written) std::cerr << "minify analyze: " << (*written)->message << "\n";
  print_summary(findings, out, options.json);
  return 0;
}

}  // namespace

void add_analyze_command(CLI::App& app, Action& action) {
  auto options = std::make_shared<AnalyzeOptions>();
  CLI::App* command = app.add_subcommand(
      "analyze", "Find where the compiled graph's values first diverge from eager's, and whether they are deterministic");
  add_graph_argument(*command, options->dir)->required();
  options->evaluation.add_to(*command, /*backend_required=*/true, /*with_checks=*/false);
  options->pool.add_to(*command);
  command->add_option("--out", options->out, "directory for analysis.md, analysis.json and analysis.svg (default: analysis)");
  command->add_option("--mode", options->mode, "isolated, in-place or both (default)")
      ->check(CLI::IsMember({"isolated", "in-place", "both"}));
  command->add_flag("--json", options->json, "print the findings as JSON");
  command->callback([options, &action] { action = [options] { return analyze(*options); }; });
}

}  // namespace minifyd::cli
