// An analysis as files: analysis.json for tools, analysis.md for people (docs/analyze.md).
#pragma once

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "common/expected.h"
#include "daemon/analysis/analysis.h"

namespace minifyd::analysis {

inline constexpr const char* analysis_json_name = "analysis.json";
inline constexpr const char* analysis_markdown_name = "analysis.md";

// The analysis and its findings; `first_divergence` names a node or is null.
nlohmann::json encode_analysis(const Analysis& analysis, const Findings& findings);

// `title` names what was analyzed (the graph directory). `plot_note` says how the plot went
// (the file, or why there is none).
std::string analysis_markdown(const Analysis& analysis, const Findings& findings, const std::string& title,
                              const std::string& plot_note);

// Each written atomically into `dir` (created if missing): analysis.json first, from which the
// plot is drawn, then analysis.md, which says how the plot went.
Expected<void> write_analysis_json(const std::filesystem::path& dir, const Analysis& analysis, const Findings& findings);
Expected<void> write_analysis_markdown(const std::filesystem::path& dir, const Analysis& analysis,
                                       const Findings& findings, const std::string& title,
                                       const std::string& plot_note);

}  // namespace minifyd::analysis
