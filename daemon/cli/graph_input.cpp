// Repro files imported as graph directories, and the backend options their origin.json records.
#include "daemon/cli/graph_input.h"

#include <iostream>
#include <set>

#include "common/file_util.h"
#include "common/json_view.h"
#include "daemon/process/python_helper.h"
#include "daemon/pool/worker_program.h"

namespace minifyd::cli {

bool is_repro_file(const std::string& argument) {
  std::filesystem::path path(argument);
  std::error_code error;
  return path.extension() == ".py" && std::filesystem::is_regular_file(path, error);
}

namespace {

// The staging directories minifyd/atomic_directory.py makes beside out_dir (.NAME.XXXX.partial).
std::set<std::filesystem::path> partial_dirs_of(const std::filesystem::path& out_dir) {
  std::set<std::filesystem::path> partials;
  std::string prefix = "." + out_dir.filename().string() + ".";
  std::error_code error;
  for (std::filesystem::directory_iterator it(out_dir.parent_path(), error), end; !error && it != end;
       it.increment(error)) {
    std::string name = it->path().filename().string();
    if (name.rfind(prefix, 0) == 0 && name.size() > prefix.size() + 8 &&
        name.compare(name.size() - 8, 8, ".partial") == 0)
      partials.insert(it->path());
  }
  return partials;
}

bool absent_or_empty(const std::filesystem::path& dir) {
  std::error_code error;
  return !std::filesystem::exists(dir, error) || (std::filesystem::is_directory(dir, error) &&
                                                  std::filesystem::is_empty(dir, error));
}

// What a failed import left: its staging directory (a killed import cannot remove it), and out_dir
// itself where it was absent or empty before (an import killed after writing it, before its summary).
void remove_failed_import(const std::filesystem::path& out_dir, const std::set<std::filesystem::path>& partials_before) {
  std::error_code error;
  for (const std::filesystem::path& partial : partial_dirs_of(out_dir))
    if (partials_before.count(partial) == 0) std::filesystem::remove_all(partial, error);
  bool existed = std::filesystem::is_directory(out_dir, error);
  std::filesystem::remove_all(out_dir, error);
  if (existed) std::filesystem::create_directory(out_dir, error);
}

}  // namespace

Expected<nlohmann::json> import_repro_file(const options::EvaluationOptions& evaluation, const std::filesystem::path& file,
                                           const std::filesystem::path& out_dir) {
  // A repro file is PyTorch 2.x code whatever the backend: the python is the one Inductor needs.
  auto python = pool::find_python(evaluation.python);
  if (!python) return python.error();
  std::filesystem::path out = std::filesystem::absolute(out_dir);
  bool out_was_free = absent_or_empty(out);
  std::set<std::filesystem::path> partials_before = partial_dirs_of(out);
  // An import refuses a directory holding something: that one is the user's, never cleaned here.
  auto clean_up = [&] {
    if (out_was_free) remove_failed_import(out, partials_before);
  };
  auto fail = [&](std::string message, ErrorKind kind = ErrorKind::invalid_input) {
    clean_up();
    return make_error(kind, std::move(message));
  };
  auto output = process::run_python_main(*python, "repro_file", {std::filesystem::absolute(file).string(), "--out", out.string()},
                                evaluation.import_timeout_seconds, clean_up);
  // A file that cannot be imported is bad input, whatever way it failed; a full disk is not the file's.
  if (!output)
    return fail(output.error().message,
                output.error().kind == ErrorKind::no_space ? ErrorKind::no_space : ErrorKind::invalid_input);
  nlohmann::json summary = nlohmann::json::parse(*output, nullptr, /*allow_exceptions=*/false);
  if (!summary.is_object())
    return fail("importing " + file.string() + ": " +
                (output->empty() ? "the import ended (exit 0) before printing its summary: did the file's code end "
                                   "the process (os._exit)?"
                                 : "the import printed no JSON summary: " + output->substr(0, 2000)));
  // What the import had to decide (a module PyTorch 2.x no longer has, a config key it dropped) is
  // the user's to know; its stderr is not shown on success.
  nlohmann::json notes = summary.value("notes", nlohmann::json::array());
  for (const nlohmann::json& note : notes)
    if (note.is_string()) std::cerr << "minify: " << file.string() << ": " << note.get<std::string>() << "\n";
  std::int64_t random = summary.value("random_storages", std::int64_t{0});
  if (random > 0)
    std::cerr << "minify: " << file.string() << ": " << random
              << " storage(s) had no stored data and were filled with random values: a failure that depends on "
                 "the values may not reproduce\n";
  return summary;
}

Expected<std::filesystem::path> graph_dir_of(const std::string& argument, const options::EvaluationOptions& evaluation,
                                             const std::filesystem::path& import_dir) {
  if (!is_repro_file(argument)) return std::filesystem::path(argument);
  auto imported = import_repro_file(evaluation, argument, import_dir);
  if (!imported) return imported.error();
  return import_dir;
}

Expected<std::filesystem::path> graph_dir_importing_to_temporary(const std::string& argument,
                                                                 const options::EvaluationOptions& evaluation,
                                                                 std::optional<TemporaryDirectory>& holder) {
  if (!is_repro_file(argument)) return std::filesystem::path(argument);
  auto temporary = TemporaryDirectory::create("minify-import");
  if (!temporary) return temporary.error();
  holder.emplace(std::move(*temporary));
  return graph_dir_of(argument, evaluation, holder->path() / "graph");
}

Expected<std::map<std::string, std::string>> origin_backend_options(const std::filesystem::path& dir) {
  std::map<std::string, std::string> options;
  std::filesystem::path path = dir / origin_file_name;
  std::error_code missing;
  if (!std::filesystem::exists(path, missing)) return options;
  auto text = read_file(path);
  if (!text) return text.error();
  nlohmann::json json = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return make_error(ErrorKind::invalid_input, path.string() + ": not JSON");
  JsonView view(json, path.string());
  auto given = view.optional_field("backend_options");
  if (!given) return given.error();
  if (!*given) return options;
  auto object = (*given)->as_object();
  if (!object) return object.error();
  for (const auto& [key, value] : **object) {
    auto text_value = JsonView(value, path.string() + ": backend_options." + key).as_string();
    if (!text_value) return text_value.error();
    options[key] = *text_value;
  }
  return options;
}

Expected<void> add_origin_options(verdict::EvaluationSpec& spec, const std::filesystem::path& dir) {
  // They are the torch.compile run's configuration (torch._inductor.config.X): another backend has none.
  auto program = pool::worker_program_for(spec.backend);
  if (!program || *program != pool::WorkerProgram::python) return {};
  auto options = origin_backend_options(dir);
  if (!options) return options.error();
  for (auto& [key, value] : *options) spec.backend_options.emplace(key, std::move(value));  // the user's win
  return {};
}

CLI::Option* add_graph_argument(CLI::App& command, std::string& dir) {
  return command.add_option("dir", dir, "graph directory (graph.json + store/), or an after_aot repro file (FILE.py)");
}

}  // namespace minifyd::cli
