// Test tool: prints the repro.py that `minify run` writes for a graph directory, so the end-to-end
// tests can run it (tests/cli/test_repro.py). Takes `minify query`'s evaluation options:
//   minifyd_write_repro GRAPH_DIR --backend B [--backend-opt K=V]... [--accuracy|--strict-accuracy]
//                       [--nan] [--check-str REGEX] [--timeout S] [--minify PATH]
#include <chrono>
#include <filesystem>
#include <iostream>

#include <CLI/CLI.hpp>

#include "daemon/options/evaluation_options.h"
#include "daemon/run/repro_script.h"

using namespace minifyd;

int main(int argc, char** argv) {
  CLI::App app{"print the repro.py of a graph directory"};
  std::string graph_dir;
  options::EvaluationOptions evaluation;
  run::ReproSpec spec;
  app.add_option("graph_dir", graph_dir)->required();
  evaluation.add_to(app);
  app.add_option("--minify", spec.minify_executable, "the minify executable the repro runs for plugins");
  CLI11_PARSE(app, argc, argv);

  auto evaluation_spec = evaluation.spec();
  if (!evaluation_spec) {
    std::cerr << "minifyd_write_repro: " << evaluation_spec.error().message << "\n";
    return 2;
  }
  spec.graph_dir = std::filesystem::absolute(graph_dir).string();
  spec.backend = evaluation_spec->backend;
  spec.backend_options = evaluation_spec->backend_options;
  spec.accuracy = evaluation_spec->accuracy;
  spec.nan_check = evaluation_spec->nan_check;
  spec.check_str = evaluation_spec->check_str;
  spec.timeout_seconds = std::chrono::duration<double>(evaluation_spec->timeout).count();
  std::cout << run::repro_script(spec);
  return 0;
}
