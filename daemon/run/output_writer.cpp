// Writing the outputs.
#include "daemon/run/output_writer.h"

#include "common/file_util.h"
#include "common/graph_codec.h"
#include "common/graph_dot.h"
#include "daemon/run/repro_script.h"
#include "daemon/run/report.h"

namespace minifyd::run {

Expected<void> write_outputs(const Checkpoint& checkpoint, const RunResult& result, const RunSettings& settings) {
  GraphDocument document = search::clone_document(checkpoint.state.document);
  search::prune_unreferenced_tensors(document);
  if (auto written = write_graph_json(document, settings.out_dir); !written) return written.error();
  if (auto written = write_file_atomic(settings.out_dir / dot_file_name, graph_to_dot(document)); !written)
    return written.error();

  const EvaluationSpec& evaluation = checkpoint.spec.evaluation;
  ReproSpec repro;
  repro.graph_dir = std::filesystem::absolute(settings.out_dir).string();
  repro.backend = evaluation.backend;
  repro.backend_options = evaluation.backend_options;
  repro.accuracy = evaluation.accuracy;
  repro.nan_check = evaluation.nan_check;
  repro.check_str = evaluation.check_str;
  repro.timeout_seconds = std::chrono::duration<double>(evaluation.timeout).count();
  repro.minify_executable = settings.minify_executable;
  if (auto written = write_file_atomic(settings.out_dir / repro_file_name, repro_script(repro)); !written)
    return written.error();
  return write_file_atomic(settings.out_dir / report_file_name, render_report(checkpoint, result, settings.workers));
}

}  // namespace minifyd::run
