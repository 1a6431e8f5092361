// The analysis phase.
#include "daemon/run/phases/analysis_phase.h"

#include <chrono>
#include <filesystem>
#include <string>

#include "common/log.h"
#include "daemon/analysis/analysis_files.h"
#include "daemon/analysis/analysis_requests.h"

namespace minifyd::run {

bool analysis_asked(const PhaseContext& context) {
  const Checkpoint& checkpoint = context.checkpoint;
  return (checkpoint.spec.analyze || checkpoint.spec.analyze_first) && !checkpoint.analysis && checkpoint.steps.empty();
}

Expected<void> analyze_original(PhaseContext& context) {
  const RunSpec& spec = context.checkpoint.spec;
  const RunPlace& place = context.place;
  auto started = std::chrono::steady_clock::now();
  // The values the analysis's workers write stay unrooted while it reads them: a gc of the daemon's
  // shared store (another job ending) waits until then.
  auto writing = place.store.lock_shared();
  if (!writing) return writing.error();
  analysis::AnalysisPlan plan{spec.evaluation, {analysis::Mode::in_place}};
  if (spec.analyze) plan.modes = {analysis::Mode::isolated, analysis::Mode::in_place};
  auto analyzed = analysis::run_analysis(context.checkpoint.state.document, place.store.root(), plan, context.pool);
  if (!analyzed) return analyzed.error().with_context("analyzing the original");
  analysis::Findings findings = analysis::findings_of(*analyzed);
  if (spec.analyze) {
    std::string title = "`" + std::filesystem::path(spec.graph_dir).filename().string() + "`";
    auto files = analysis::render_analysis_files(*analyzed, findings, title);
    if (!files) return files.error().with_context("writing the analysis");
    if (files->count(analysis::analysis_plot_name) == 0)
      log::warn(std::string("the analysis has no plot: ") + analysis::analysis_markdown_name + " says why");
    if (auto saved = place.save_analysis(*files); !saved) return saved.error().with_context("saving the analysis");
  }
  OriginalAnalysis found;
  found.first_divergence = findings.first_divergence;
  found.requests = analyzed->requests;
  found.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  log::info("analysis: " + (found.first_divergence ? "first divergence at '" + *found.first_divergence + "'"
                                                   : std::string("no divergence")) +
            " (" + std::to_string(found.requests) + " worker requests, " + std::to_string(found.seconds) + " s)");
  context.checkpoint.analysis = std::move(found);
  return {};
}

}  // namespace minifyd::run
