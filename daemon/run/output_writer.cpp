// Writing the outputs.
#include "daemon/run/output_writer.h"

#include <nlohmann/json.hpp>

#include "common/file_util.h"
#include "common/graph_codec.h"
#include "common/graph_dot.h"
#include "daemon/process/python_helper.h"
#include "daemon/pool/worker_program.h"
#include "daemon/run/repro_script.h"
#include "protocol/operator_libraries.h"

namespace minifyd::run {

namespace {

// repro.py in after_aot's shape, written by PyTorch's own generator in the run's python
// (worker/python/minifyd/after_aot_repro.py), with the exact inputs in repro_inputs/ beside it.
Expected<void> write_after_aot_repro(const verdict::EvaluationSpec& evaluation, const OutputPlace& place) {
  auto python = place.python();
  if (!python) return python.error();
  std::vector<std::string> arguments = {
      std::filesystem::absolute(place.out_dir).string(),
      "--out", (std::filesystem::absolute(place.out_dir) / repro_file_name).string(), "--backend", evaluation.backend};
  for (const auto& [key, value] : evaluation.backend_options) {
    arguments.push_back("--backend-opt");
    arguments.push_back(key + "=" + value);
  }
  if (evaluation.accuracy != protocol::AccuracyMode::off) arguments.push_back("--accuracy");
  // The job's operator libraries, which the writer loads (checked as a worker does) and repro.py too.
  if (!evaluation.op_libraries.empty()) {
    nlohmann::json libraries = nlohmann::json::object();
    protocol::encode_op_libraries(evaluation.op_libraries, libraries);
    arguments.push_back("--op-libraries");
    arguments.push_back(libraries[protocol::op_libraries_key].dump());
  }
  auto written = place.standby != nullptr && place.standby->waiting()
                     ? place.standby->run_main("after_aot_repro", arguments, process::helper_timeout_seconds)
                     : process::run_python_main(*python, "after_aot_repro", arguments, process::helper_timeout_seconds);
  if (!written) return written.error().with_context("writing repro.py with " + *python);
  return {};
}

}  // namespace

Expected<void> write_outputs(const Checkpoint& checkpoint, const std::string& report, const OutputPlace& place) {
  if (auto written = write_graph_outputs(checkpoint, place); !written) return written.error();
  return write_file_atomic(place.out_dir / report_file_name, report);
}

Expected<void> remove_graph_outputs(const std::filesystem::path& out_dir) {
  for (const char* name : {graph_file_name, dot_file_name, output_code_dir_name, bisect::bisect_file_name, repro_file_name,
                           repro_inputs_dir_name}) {
    std::error_code error;
    std::filesystem::remove_all(out_dir / name, error);
    if (error) return make_error(ErrorKind::io, "removing " + (out_dir / name).string() + ": " + error.message());
  }
  return {};
}

Expected<void> write_graph_outputs(const Checkpoint& checkpoint, const OutputPlace& place) {
  GraphDocument document = search::clone_document(checkpoint.state.document);
  search::prune_unreferenced_tensors(document);
  if (auto written = write_graph_json(document, place.out_dir); !written) return written.error();
  if (auto written = write_file_atomic(place.out_dir / dot_file_name, graph_to_dot(document)); !written)
    return written.error();
  if (checkpoint.generated_code)
    if (auto written = write_generated_code(*checkpoint.generated_code, place.out_dir); !written) return written.error();
  if (checkpoint.bisect)
    if (auto written = write_file_atomic(place.out_dir / bisect::bisect_file_name, bisect::encode(*checkpoint.bisect).dump(2) + "\n");
        !written)
      return written.error();

  const verdict::EvaluationSpec& evaluation = checkpoint.spec.evaluation;
  auto program = pool::worker_program_for(evaluation.backend);
  if (!program) return program.error();
  if (*program == pool::WorkerProgram::python) return write_after_aot_repro(evaluation, place);
  ReproSpec repro;
  repro.graph_dir = std::filesystem::absolute(place.out_dir).string();
  repro.backend = evaluation.backend;
  repro.backend_options = evaluation.backend_options;
  repro.accuracy = evaluation.accuracy;
  repro.nan_check = evaluation.nan_check;
  repro.check_str = evaluation.check_str;
  repro.timeout_seconds = std::chrono::duration<double>(evaluation.timeout).count();
  repro.minify_executable = place.minify_executable;
  return write_file_atomic(place.out_dir / repro_file_name, repro_script(repro));
}

}  // namespace minifyd::run
