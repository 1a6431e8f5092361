// An analysis as files: analysis.json for tools, analysis.md for people (docs/analyze.md).
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "common/expected.h"
#include "daemon/analysis/analysis.h"

namespace minifyd::analysis {

inline constexpr const char* analysis_json_name = "analysis.json";
inline constexpr const char* analysis_markdown_name = "analysis.md";
inline constexpr const char* analysis_plot_name = "analysis.svg";

// The analysis and its findings; `first_divergence` names a node or is null.
nlohmann::json encode_analysis(const Analysis& analysis, const Findings& findings);

// `title` names what was analyzed (the graph directory). `plot_note` says how the plot went
// (the file, or why there is none).
std::string analysis_markdown(const Analysis& analysis, const Findings& findings, const std::string& title,
                              const std::string& plot_note);

// The files by name (analysis.json, analysis.md and, when one could be drawn, analysis.svg) and their
// text: what a run keeps of the analysis of its original, to write with its outputs.
using AnalysisFiles = std::map<std::string, std::string>;

// Writes the files into `dir` (created if missing), each atomically: analysis.json first, from
// which the plot is drawn (analysis_plot.h), then analysis.md, which shows the plot or says why
// there is none. The value is that reason when there is no plot; errors: a file not written.
Expected<std::optional<Error>> write_analysis_files(const std::filesystem::path& dir, const Analysis& analysis,
                                                    const Findings& findings, const std::string& title);
// The same files as text, written in a scratch directory and read back.
Expected<AnalysisFiles> render_analysis_files(const Analysis& analysis, const Findings& findings,
                                              const std::string& title);
// Rendered files written into `dir`, each atomically.
Expected<void> write_rendered_analysis(const std::filesystem::path& dir, const AnalysisFiles& files);

// As the daemon's job store keeps them: {NAME: TEXT}. Errors name what is not so.
std::string encode_analysis_files(const AnalysisFiles& files);
Expected<AnalysisFiles> decode_analysis_files(const std::string& text);

}  // namespace minifyd::analysis
