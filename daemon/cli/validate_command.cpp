// `minify validate DIR`: decode and check a graph directory, print its summary and canonical hash.
#include <iostream>
#include <map>

#include <nlohmann/json.hpp>

#include "common/canonical_hash.h"
#include "common/content_store.h"
#include "common/graph_codec.h"
#include "common/operator_library.h"
#include "daemon/options/exit_codes.h"
#include "daemon/cli/commands.h"
#include "daemon/options/evaluation_options.h"

namespace minifyd::cli {
namespace {

struct ValidateOptions {
  std::string dir;
  bool check_store = false;
  bool json = false;
  std::vector<std::string> op_libraries;  // NS=PATH.so: their namespaces allowed
};

// Every stored storage's blob must be present, intact and of the document's size: a blob of
// another size, or one that is no regular file, is refused before it is read.
std::vector<std::string> store_problems(const GraphDocument& document, const std::string& dir) {
  auto store = ContentStore::open(std::filesystem::path(dir) / store_dir_name, false);
  if (!store) return {store.error().message};
  std::vector<std::string> problems;
  for (std::size_t i = 0; i < document.storages.size(); ++i) {
    const StorageRef& storage = document.storages[i];
    if (!storage.stored()) continue;
    if (auto content = store->get(storage.hash, storage.nbytes); !content)
      problems.push_back("storages[" + std::to_string(i) + "]: " + content.error().message);
  }
  return problems;
}

int validate(const ValidateOptions& options) {
  auto libraries = recorded_operator_libraries(options.op_libraries);
  auto document = libraries ? load_graph_dir(options.dir, operator_scope(*libraries))
                            : Expected<GraphDocument>(libraries.error());
  if (!document) {
    if (options.json)
      std::cout << nlohmann::json{{"valid", false}, {"error", document.error().message}}.dump() << "\n";
    else
      std::cerr << "minify validate: " << document.error().message << "\n";
    return options::exit_failed;
  }
  std::vector<std::string> problems;
  if (options.check_store) problems = store_problems(*document, options.dir);

  std::map<std::string, int> ops;
  for (const Node* node : document->graph.nodes()) ++ops[to_string(node->op())];
  std::uint64_t bytes = 0;
  for (const StorageRef& storage : document->storages) bytes += storage.nbytes;
  std::string hash = canonical_hash(*document);

  if (options.json) {
    nlohmann::json summary{{"valid", problems.empty()}, {"nodes", document->graph.size()},
                           {"ops", ops}, {"inputs", document->inputs.size()},
                           {"constants", document->constants.size()},
                           {"storages", document->storages.size()}, {"storage_bytes", bytes},
                           {"canonical_hash", hash}};
    if (!problems.empty()) summary["store_problems"] = problems;
    std::cout << summary.dump() << "\n";
  } else {
    for (const std::string& problem : problems) std::cerr << "minify validate: " << problem << "\n";
    std::cout << options.dir << ": " << (problems.empty() ? "valid" : "INVALID") << " graph, "
              << document->graph.size() << " nodes (";
    bool first = true;
    for (const auto& [op, count] : ops) {
      std::cout << (first ? "" : ", ") << count << " " << op;
      first = false;
    }
    std::cout << "), " << document->inputs.size() << " inputs, " << document->constants.size()
              << " constants, " << document->storages.size() << " storages (" << bytes
              << " bytes)\ncanonical hash " << hash << "\n";
  }
  return problems.empty() ? options::exit_ok : options::exit_failed;
}

}  // namespace

void add_validate_command(CLI::App& app, Action& action) {
  auto options = std::make_shared<ValidateOptions>();
  CLI::App* command = app.add_subcommand("validate", "Check a graph directory (graph.json + store/) "
                                                     "and print its summary and canonical hash");
  command->add_option("dir", options->dir, "graph directory")->required();
  command->add_flag("--check-store", options->check_store,
                    "also read and verify every blob the graph needs");
  command->add_flag("--json", options->json, "print the summary as JSON");
  options::add_op_library_option(*command, options->op_libraries);
  command->callback([options, &action] { action = [options] { return validate(*options); }; });
}

}  // namespace minifyd::cli
