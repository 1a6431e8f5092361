// Repro files imported as graph directories, and the backend options their origin.json records.
#include "daemon/cli/graph_input.h"

#include <iostream>

#include "common/file_util.h"
#include "common/json_view.h"
#include "daemon/pool/worker_program.h"

namespace minifyd::cli {

bool is_repro_file(const std::string& argument) {
  std::filesystem::path path(argument);
  std::error_code error;
  return path.extension() == ".py" && std::filesystem::is_regular_file(path, error);
}

Expected<nlohmann::json> import_repro_file(const EvaluationOptions& evaluation, const std::filesystem::path& file,
                                           const std::filesystem::path& out_dir) {
  // A repro file is PyTorch 2.x code whatever the backend: the python is the one Inductor needs.
  auto python = find_python(evaluation.python);
  if (!python) return python.error();
  auto output = run_python_main(*python, "repro_file",
                                {std::filesystem::absolute(file).string(), "--out", std::filesystem::absolute(out_dir).string()});
  if (!output) return make_error(ErrorKind::invalid_input, output.error().message);
  nlohmann::json summary = nlohmann::json::parse(*output, nullptr, /*allow_exceptions=*/false);
  if (!summary.is_object())
    return make_error(ErrorKind::io, "importing " + file.string() + ": the import printed no JSON summary: " + *output);
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

Expected<std::filesystem::path> graph_dir_of(const std::string& argument, const EvaluationOptions& evaluation,
                                             const std::filesystem::path& import_dir) {
  if (!is_repro_file(argument)) return std::filesystem::path(argument);
  auto imported = import_repro_file(evaluation, argument, import_dir);
  if (!imported) return imported.error();
  return import_dir;
}

Expected<std::filesystem::path> graph_dir_importing_to_temporary(const std::string& argument,
                                                                 const EvaluationOptions& evaluation,
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

Expected<void> add_origin_options(EvaluationSpec& spec, const std::filesystem::path& dir) {
  // They are the torch.compile run's configuration (torch._inductor.config.X): another backend has none.
  auto program = worker_program_for(spec.backend);
  if (!program || *program != WorkerProgram::python) return {};
  auto options = origin_backend_options(dir);
  if (!options) return options.error();
  for (auto& [key, value] : *options) spec.backend_options.emplace(key, std::move(value));  // the user's win
  return {};
}

}  // namespace minifyd::cli
