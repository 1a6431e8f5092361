// The report's Markdown.
#include "daemon/run/report.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "daemon/search/search_options.h"

namespace minifyd::run {
namespace {

std::string shape_text(const GraphShape& shape) {
  return std::to_string(shape.nodes) + " nodes, " + std::to_string(shape.inputs) + " inputs, " +
         std::to_string(shape.outputs) + " outputs";
}

std::string seconds_text(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f s", seconds);
  return text;
}

std::string check_text(const RunSpec& spec) {
  std::string text = spec.evaluation.accuracy == protocol::AccuracyMode::off
                         ? "the compiled run fails"
                         : std::string("--") + protocol::to_string(spec.evaluation.accuracy);
  if (spec.evaluation.nan_check) text += ", --nan";
  if (spec.evaluation.check_str) text += ", --check-str `" + *spec.evaluation.check_str + "`";
  text += spec.match == verdict::MatchMode::same ? "; a candidate must fail the way the original does"
                                        : "; any failure counts (--match any)";
  return text;
}

}  // namespace

std::string render_report(const Checkpoint& checkpoint, const RunResult& result, std::size_t workers) {
  const RunSpec& spec = checkpoint.spec;
  std::ostringstream out;
  out << "# minify run\n\n";
  out << "- **Original:** `" << spec.graph_dir << "`: " << shape_text(checkpoint.original) << "\n";
  out << "- **Backend:** `" << spec.evaluation.backend << "`";
  for (const auto& [key, value] : spec.evaluation.backend_options) out << " `" << key << "=" << value << "`";
  out << "\n- **Check:** " << check_text(spec) << "\n";
  out << "- **Failure:** "
      << (checkpoint.signature ? describe(*checkpoint.signature) : "not recorded (--skip-sanity)") << "\n";
  if (checkpoint.plain_check) {
    const protocol::PlainCheck& check = *checkpoint.plain_check;
    const std::map<std::string, std::string> words = {{protocol::plain_check_fails, "fails the same way"},
                                                      {protocol::plain_check_differs, "fails otherwise"},
                                                      {protocol::plain_check_passes, "passes"},
                                                      {protocol::plain_check_skipped, "was not run"}};
    auto word = words.find(check.outcome);
    out << "- **Under plain PyTorch:** the original's repro.py in a fresh python "
        << (word == words.end() ? check.outcome : word->second);
    if (check.outcome != protocol::plain_check_skipped) out << " in " << seconds_text(check.seconds);
    out << " (" << check.detail << ")\n";
  }
  out << "- **Result:** " << shape_text(shape_of(checkpoint.state)) << "\n";
  out << "- **Candidates' time limit:** " << seconds_text(std::chrono::duration<double>(result.candidate_timeout).count())
      << (spec.timeout_follows_original ? " (following the original's compile + run; ceiling " : " (--timeout; ")
      << seconds_text(std::chrono::duration<double>(spec.evaluation.timeout).count()) << ")\n";
  out << "- **Stopped:** " << search::to_string(result.stop);
  if (result.error) out << ": " << result.error->message;
  out << "\n";
  if (checkpoint.analysis) {
    const OriginalAnalysis& analysis = *checkpoint.analysis;
    out << "- **Analysis:** "
        << (analysis.first_divergence ? "the compiled values first diverge at `" + *analysis.first_divergence + "`"
                                      : std::string("no node's compiled value diverges"))
        << " (" << analysis.requests << " worker requests, " << seconds_text(analysis.seconds) << ")";
    if (spec.analyze_first && analysis.first_divergence)
      out << "; the search tried the graph cut there first (step `" << search::first_divergence_step << "` below when it still failed)";
    out << "\n";
  }
  out << "\n## Accepted reductions\n\n";
  if (checkpoint.steps.empty()) {
    out << "None: no strategy found a smaller graph that still fails.\n";
  } else {
    out << "| # | strategy | granularity | nodes | inputs | outputs | queries so far |\n";
    out << "|---|---|---|---|---|---|---|\n";
    for (std::size_t i = 0; i < checkpoint.steps.size(); ++i) {
      const AcceptedStep& step = checkpoint.steps[i];
      out << "| " << i + 1 << " | " << step.strategy << " | " << step.granularity << " | " << step.shape.nodes
          << " | " << step.shape.inputs << " | " << step.shape.outputs << " | " << step.queries << " |\n";
    }
  }
  if (checkpoint.input_shrink)
    out << "\n" << shrink::render_markdown(*checkpoint.input_shrink,
                                         checkpoint.original_data ? &*checkpoint.original_data : nullptr);
  if (checkpoint.generated_code) out << "\n" << render_markdown(*checkpoint.generated_code);
  if (checkpoint.bisect) out << "\n" << bisect::render_markdown(*checkpoint.bisect);
  const RunTotals& totals = checkpoint.totals;
  out << "\n## Totals\n\n";
  out << "| queries | cache hits | crashes contained | timeouts | wall time | sessions | workers |\n";
  out << "|---|---|---|---|---|---|---|\n";
  out << "| " << totals.queries << " | " << totals.cache_hits << " | " << totals.crashes_contained << " | "
      << totals.timeouts << " | " << seconds_text(totals.wall_seconds) << " | " << totals.sessions << " | "
      << workers << " |\n\n";
  const VerdictTally& tally = result.tally;
  out << "Verdicts of the last session: " << tally.passed << " passed, " << tally.failed
      << " failed like the original, " << tally.other_failures << " failed otherwise (not counted)";
  for (const auto& [kind, count] : tally.failures_by_kind) out << "; " << kind << ": " << count;
  out << ".\n\n";
  if (!tally.refused.empty()) {
    out << "Failures refused in the last session (another signature than the original's, or not matching "
           "--check-str), most frequent first:\n\n| candidates | failure |\n|---|---|\n";
    std::vector<std::pair<std::uint64_t, std::string>> refused;
    for (const auto& [failure, count] : tally.refused) refused.emplace_back(count, failure);
    std::stable_sort(refused.begin(), refused.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    for (const auto& [count, failure] : refused) out << "| " << count << " | `" << failure << "` |\n";
    out << "\n";
  }
  if (result.session_lineages > 0)
    out << "Speculation in the last session: " << result.session_lineages << " lineages searched ahead of slow verdicts; "
        << result.session_speculative_queries << " queries of those that guessed wrong are not in the totals.\n\n";
  out << "## Files\n\n";
  out << "- `graph.json` and `store/`: the minimized graph (`minify query` accepts this directory).\n";
  out << "- `repro.py`: `python3 repro.py` reproduces the failure; exit code 1 when it does.\n";
  out << "- `graph.dot`: `dot -Tsvg graph.dot -o graph.svg` draws it.\n";
  out << "- `checkpoint.json`: the search's state, for `minify run --resume`.\n";
  if (checkpoint.generated_code && !checkpoint.generated_code->modules.empty())
    out << "- `output_code/`: Inductor's output code for the minimized graph, a module per file.\n";
  if (checkpoint.bisect) out << "- `bisect.json`: the bisect's finding and every probe (docs/bisect.md).\n";
  if (spec.analyze)
    out << "- `analysis.md`, `analysis.json`, `analysis.svg`: the original's analysis (docs/analyze.md).\n";
  return out.str();
}

}  // namespace minifyd::run
