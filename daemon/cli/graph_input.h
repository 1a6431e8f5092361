// What `minify run`, `query` and `submit` take as their graph: a graph directory, or an after_aot
// repro file (FILE.py: minifier_launcher.py, repro.py, checkpoints/*.py) imported into one first by
// minifyd.repro_file in the user's PyTorch 2.x. A directory written by an import or by
// `minify capture` holds origin.json with the configuration of the user's run as backend options:
// its candidates compile under them unless --backend-opt says otherwise.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "common/expected.h"
#include "common/temporary_directory.h"
#include "daemon/options/evaluation_options.h"

namespace minifyd::cli {

inline constexpr const char* origin_file_name = "origin.json";

// Registers the command's graph argument ("dir"): a graph directory or a repro file.
CLI::Option* add_graph_argument(CLI::App& command, std::string& dir);

// A regular file whose name ends in .py: a repro file to import, not a graph directory.
bool is_repro_file(const std::string& argument);

// Imports `file` into `out_dir` (absent or empty; nothing is left there on failure) with the python
// that evaluation's --python names or find_python() finds: the import's JSON summary (nodes,
// inputs, random_storages, backend_options, notes, ...). Its notes go to stderr, and a warning when
// storages were filled with random data.
Expected<nlohmann::json> import_repro_file(const options::EvaluationOptions& evaluation, const std::filesystem::path& file,
                                           const std::filesystem::path& out_dir);

// The graph directory `argument` names: itself, or for a repro file `import_dir` after importing it.
Expected<std::filesystem::path> graph_dir_of(const std::string& argument, const options::EvaluationOptions& evaluation,
                                             const std::filesystem::path& import_dir);

// graph_dir_of() importing a repro file into a temporary directory that `holder` keeps (and removes
// when it goes): for commands done with the graph once they return (query, submit).
Expected<std::filesystem::path> graph_dir_importing_to_temporary(const std::string& argument,
                                                                 const options::EvaluationOptions& evaluation,
                                                                 std::optional<TemporaryDirectory>& holder);

// dir/origin.json's backend options; none when the directory has no origin.json.
Expected<std::map<std::string, std::string>> origin_backend_options(const std::filesystem::path& dir);

// `spec` with the backend options of dir's origin.json added where the user gave none of the same key,
// when its backend is a torch.compile one (the options are that run's configuration).
Expected<void> add_origin_options(verdict::EvaluationSpec& spec, const std::filesystem::path& dir);

}  // namespace minifyd::cli
