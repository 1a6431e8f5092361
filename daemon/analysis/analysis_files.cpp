// analysis.json from lists of fields; analysis.md's summary and table of the worst nodes.
#include "daemon/analysis/analysis_files.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "common/file_util.h"
#include "common/temporary_directory.h"
#include "daemon/analysis/analysis_plot.h"
#include "protocol/json_fields.h"
#include "protocol/worker_messages.h"

namespace minifyd::analysis {

constexpr auto node_result_fields = [](auto& result, auto&& field) {
  field("measurement", result.measurement);
  field("failure", result.failure);
  field("failed", result.failed, std::string());
};
nlohmann::json encode(const NodeResult& result) { return protocol::encode_fields(result, node_result_fields); }

constexpr auto node_analysis_fields = [](auto& node, auto&& field) {
  field("node", node.node);
  field("op", node.op);
  field("position", node.position);
  field("isolated", node.isolated);
  field("in_place", node.in_place);
};
nlohmann::json encode(const NodeAnalysis& node) { return protocol::encode_fields(node, node_analysis_fields); }

namespace {

constexpr auto findings_fields = [](auto& findings, auto&& field) {
  field("isolated_divergence", findings.isolated_divergence);
  field("in_place_divergence", findings.in_place_divergence);
  field("fusion", findings.fusion);
  field("compiled_nondeterministic", findings.compiled_nondeterministic);
  field("fp64_nondeterministic", findings.fp64_nondeterministic);
  field("failed_nodes", findings.failed_nodes);
  field("in_place_measured", findings.in_place_measured);
};

constexpr auto analysis_fields = [](auto& analysis, auto&& field) {
  field("backend", analysis.backend);
  field("backend_options", analysis.backend_options);
  field("exposure", analysis.exposure, std::string());
  field("eager_failure", analysis.eager_failure);
  field("in_place_failure", analysis.in_place_failure);
  field("requests", analysis.requests);
  field("nodes", analysis.nodes);
};

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", value);
  return text;
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

std::string figures(const std::optional<protocol::ErrorFigures>& figures) {
  return figures ? number(figures->max_abs_error) + " / " + number(figures->rmse) : "–";
}

std::string verdict_text(const NodeResult& result) {
  if (result.failure) return result.failed + " fails: " + protocol::describe(*result.failure);
  if (!result.measurement->measured) return "not measured: " + result.measurement->note;
  std::string text = result.diverges() ? "**diverges**" : "ok";
  if (!result.measurement->compiled_deterministic) text += ", compiled nondeterministic";
  if (!result.measurement->fp64_deterministic) text += ", fp64 nondeterministic";
  return text;
}

// Worse first: failures, then divergences, then the compiled value's RMSE against fp64 relative to
// eager's.
double badness(const NodeResult& result) {
  if (result.failure) return 4;
  if (!result.measurement->measured) return 0;
  double relative = 0;
  if (result.measurement->compiled && result.measurement->eager) {
    double compiled = result.measurement->compiled->rmse;
    double eager = result.measurement->eager->rmse;
    relative = std::isfinite(compiled) ? compiled / (compiled + eager + 1e-30) : 1;
  }
  return (result.diverges() ? 2 : 0) + relative;
}

std::string mode_name(Mode mode) { return mode == Mode::isolated ? "isolated" : "in place"; }

bool ran(const Analysis& analysis, Mode mode) {
  return std::find(analysis.modes.begin(), analysis.modes.end(), mode) != analysis.modes.end();
}

std::string divergence_line(const Analysis& analysis, const Findings& findings) {
  if (!findings.first_divergence) return "**No divergence**: every compiled value measured passes `same()` against eager and fp64.";
  std::string line = "**First divergence: node `" + *findings.first_divergence + "`**";
  if (analysis.modes.size() == 1) return line + " (" + mode_name(analysis.modes.front()) + " mode only).";
  if (findings.isolated_divergence == findings.in_place_divergence) return line + ", in both modes.";
  auto where = [](const std::optional<std::string>& node) { return node ? "`" + *node + "`" : std::string("none"); };
  return line + " (isolated: " + where(findings.isolated_divergence) + "; in place: " + where(findings.in_place_divergence) + ").";
}

std::string determinism_line(const char* what, const std::vector<std::string>& nodes) {
  if (nodes.empty()) return std::string("- ") + what + ": deterministic (two runs alike bit for bit at every node).\n";
  std::string line = std::string("- ") + what + ": **nondeterministic** at " + std::to_string(nodes.size()) + " node(s):";
  for (std::size_t i = 0; i < nodes.size() && i < 10; ++i) line += " `" + nodes[i] + "`";
  return line + (nodes.size() > 10 ? " …\n" : "\n");
}

}  // namespace

nlohmann::json encode_analysis(const Analysis& analysis, const Findings& findings) {
  nlohmann::json json = protocol::encode_fields(analysis, analysis_fields);
  json["first_divergence"] = findings.first_divergence ? nlohmann::json(*findings.first_divergence) : nlohmann::json();
  json["modes"] = nlohmann::json::array();
  for (Mode mode : analysis.modes) json["modes"].push_back(to_string(mode));
  json["findings"] = protocol::encode_fields(findings, findings_fields);
  return json;
}

std::string analysis_markdown(const Analysis& analysis, const Findings& findings, const std::string& title,
                              const std::string& plot_note) {
  std::ostringstream md;
  md << "# Analysis of " << title << " with " << analysis.backend << "\n\n" << divergence_line(analysis, findings)
     << "\n\n";
  if (findings.fusion) md << "**The modes disagree**: " << *findings.fusion << ".\n\n";
  if (ran(analysis, Mode::isolated)) md << "Isolated: each node compiled and run alone on its stored eager inputs. ";
  if (ran(analysis, Mode::in_place)) {
    md << "In place: the whole graph compiled once";
    if (analysis.exposure == protocol::exposure_outputs)
      md << ", every value read as an added output of the compiled graph (which can change what the backend fuses)";
    else if (analysis.exposure == protocol::exposure_hooks)
      md << ", the values read through the compiler's intermediate hooks";
    md << ".";
    if (!analysis.in_place_failure)
      md << " " << findings.in_place_measured << " of " << analysis.nodes.size()
         << " nodes had a value to measure in place (a compiler's hooks see the values it keeps in buffers of their "
            "own; the rest are fused into other kernels).";
  }
  md << "\n\n";
  if (analysis.eager_failure)
    md << "**The graph does not run in eager**: " << protocol::describe(*analysis.eager_failure)
       << ". Nodes from there on have no eager value to be measured against.\n\n";
  if (analysis.in_place_failure)
    md << "**The whole graph fails in place** (" << analysis.in_place_failure->failed
       << "): " << protocol::describe(*analysis.in_place_failure->failure) << ".\n\n";
  md << "Determinism:\n" << determinism_line("the compiled graph", findings.compiled_nondeterministic)
     << determinism_line("the fp64 reference", findings.fp64_nondeterministic) << "\n";
  md << plot_note << "\n\n";

  struct Row {
    const NodeAnalysis* node;
    Mode mode;
    const NodeResult* result;
  };
  std::vector<Row> rows;
  for (const NodeAnalysis& node : analysis.nodes)
    for (Mode mode : {Mode::isolated, Mode::in_place})
      if (const auto& result = node.result(mode)) rows.push_back({&node, mode, &*result});
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return badness(*a.result) > badness(*b.result); });
  constexpr std::size_t shown = 20;
  md << "## The worst nodes\n\n" << std::min(shown, rows.size()) << " of " << rows.size()
     << " results, worst first (failures, divergences, then the compiled RMSE against fp64 relative to eager's). "
        "Errors are against the fp64 reference, as max abs error / RMSE; "
     << findings.failed_nodes << " node(s) failed in some mode. Every node is in " << analysis_json_name << ".\n\n";
  md << "| node | operator | mode | verdict | compiled | eager | shape | dtype |\n|---|---|---|---|---|---|---|---|\n";
  for (std::size_t i = 0; i < rows.size() && i < shown; ++i) {
    const Row& row = rows[i];
    const auto& m = row.result->measurement;
    md << "| `" << row.node->node << "` | " << row.node->op << " | " << mode_name(row.mode) << " | "
       << verdict_text(*row.result) << " | " << (m ? figures(m->compiled) : "–") << " | " << (m ? figures(m->eager) : "–")
       << " | " << (m && m->measured ? shape_text(m->shape) : "–") << " | " << (m && m->measured ? m->dtype : "–") << " |\n";
  }
  return md.str();
}

Expected<std::optional<Error>> write_analysis_files(const std::filesystem::path& dir, const Analysis& analysis,
                                                    const Findings& findings, const std::string& title) {
  std::error_code code;
  std::filesystem::create_directories(dir, code);
  if (code) return make_error(ErrorKind::io, "creating " + dir.string() + ": " + code.message());
  if (auto written = write_file_atomic(dir / analysis_json_name, encode_analysis(analysis, findings).dump(2) + "\n");
      !written)
    return written.error();
  auto plot = draw_analysis_plot(dir / analysis_json_name, dir / analysis_plot_name);
  std::string plot_note = plot ? std::string("![error against fp64 along the graph](") + analysis_plot_name + ")"
                               : plot.error().message;
  if (auto written = write_file_atomic(dir / analysis_markdown_name, analysis_markdown(analysis, findings, title, plot_note));
      !written)
    return written.error();
  if (!plot) return std::optional<Error>(plot.error());
  return std::optional<Error>();
}

Expected<AnalysisFiles> render_analysis_files(const Analysis& analysis, const Findings& findings,
                                              const std::string& title) {
  auto scratch = TemporaryDirectory::create("minify-analysis");
  if (!scratch) return scratch.error();
  if (auto written = write_analysis_files(scratch->path(), analysis, findings, title); !written) return written.error();
  AnalysisFiles files;
  for (const char* name : {analysis_json_name, analysis_markdown_name, analysis_plot_name}) {
    std::error_code missing;
    if (!std::filesystem::exists(scratch->path() / name, missing)) continue;  // no plot
    auto text = read_file(scratch->path() / name);
    if (!text) return text.error();
    files[name] = std::move(*text);
  }
  return files;
}

Expected<void> write_rendered_analysis(const std::filesystem::path& dir, const AnalysisFiles& files) {
  for (const auto& [name, text] : files)
    if (auto written = write_file_atomic(dir / name, text); !written) return written.error();
  return {};
}

std::string encode_analysis_files(const AnalysisFiles& files) { return nlohmann::json(files).dump(); }

Expected<AnalysisFiles> decode_analysis_files(const std::string& text) {
  nlohmann::json json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) return make_error(ErrorKind::corrupt, "the analysis files are not a JSON object");
  AnalysisFiles files;
  for (const auto& [name, value] : json.items()) {
    // Only the files an analysis writes: a name is never a path out of the directory it goes to.
    if (name != analysis_json_name && name != analysis_markdown_name && name != analysis_plot_name)
      return make_error(ErrorKind::corrupt, "the analysis files name '" + name + "', which no analysis writes");
    if (!value.is_string()) return make_error(ErrorKind::corrupt, "the analysis file " + name + " is not text");
    files[name] = value.get<std::string>();
  }
  return files;
}

}  // namespace minifyd::analysis
