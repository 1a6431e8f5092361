// `minify import FILE.py --out DIR`: an after_aot repro file (minifier_launcher.py, repro.py,
// checkpoints/*.py) written as a graph directory, with origin.json recording its configuration.
#include <iostream>

#include <nlohmann/json.hpp>

#include "daemon/options/exit_codes.h"
#include "daemon/cli/commands.h"
#include "daemon/cli/graph_input.h"

namespace minifyd::cli {
namespace {

struct ImportOptions {
  std::string file;
  std::string out;
  options::EvaluationOptions evaluation;  // its --python and --import-timeout only
  bool json = false;
};

int import_file(const ImportOptions& options) {
  if (!is_repro_file(options.file)) {
    std::string message = options.file + ": not a file named *.py (an after_aot repro file)";
    if (options.json) std::cout << nlohmann::json{{"error", message}}.dump() << "\n";
    else std::cerr << "minify import: " << message << "\n";
    return options::exit_usage;
  }
  auto summary = import_repro_file(options.evaluation, options.file, options.out);
  if (!summary) {
    if (options.json) std::cout << nlohmann::json{{"error", summary.error().message}}.dump() << "\n";
    else std::cerr << "minify import: " << summary.error().message << "\n";
    return options::exit_code_of(summary.error());
  }
  if (options.json) {
    std::cout << summary->dump() << "\n";
    return options::exit_ok;
  }
  std::cout << "imported " << options.file << ": " << summary->value("nodes", 0) << " nodes, "
            << summary->value("inputs", 0) << " inputs -> " << options.out << "\n";
  nlohmann::json options_of_file = summary->value("backend_options", nlohmann::json::object());
  for (const auto& [key, value] : options_of_file.items())
    std::cout << "backend option (from the file's config lines): " << key << "=" << value.get<std::string>() << "\n";
  return options::exit_ok;
}

}  // namespace

void add_import_command(CLI::App& app, Action& action) {
  auto options = std::make_shared<ImportOptions>();
  CLI::App* command =
      app.add_subcommand("import", "Write an after_aot repro file (minifier_launcher.py, repro.py) as a graph directory");
  command->add_option("file", options->file, "the repro file PyTorch wrote")->required();
  command->add_option("--out", options->out, "the graph directory to write (absent or empty)")->required();
  command->add_option("--python", options->evaluation.python,
                      "the python3 whose PyTorch 2.x runs the file's definitions (default: as for --backend inductor)");
  options->evaluation.add_import_timeout(*command);
  options::add_memory_limit_option(*command, options->evaluation.sandbox);
  command->add_flag("--json", options->json, "print the import's summary as JSON");
  command->callback([options, &action] { action = [options] { return import_file(*options); }; });
}

}  // namespace minifyd::cli
