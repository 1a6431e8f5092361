// The findings: first divergences, disagreement between the modes, determinism.
#include "daemon/analysis/analysis.h"

#include <algorithm>
#include <cstdint>

namespace minifyd::analysis {
namespace {

std::optional<std::size_t> first_diverging(const Analysis& analysis, Mode mode) {
  for (std::size_t i = 0; i < analysis.nodes.size(); ++i) {
    const auto& result = analysis.nodes[i].result(mode);
    if (result && result->diverges()) return i;
  }
  return std::nullopt;
}

// A node measured right (no divergence, no failure) in `mode`.
bool measured_right(const NodeAnalysis& node, Mode mode) {
  const auto& result = node.result(mode);
  return result && result->measurement && result->measurement->measured && !result->diverges();
}

// The modes disagree where one's first divergence is a node the other measured right, and the other
// saw no divergence before it: where the other diverged earlier (at a node whose value one mode
// could not read, fused away in place), they agree on where it starts.
std::optional<std::string> disagreement(const Analysis& analysis, std::optional<std::size_t> isolated,
                                        std::optional<std::size_t> in_place) {
  if (in_place && measured_right(analysis.nodes[*in_place], Mode::isolated) && isolated.value_or(SIZE_MAX) > *in_place)
    return "in place, node '" + analysis.nodes[*in_place].node +
           "' diverges, but compiled alone on the same inputs it does not: a fusion bug (how the backend compiles it "
           "together with its neighbours), not an operator bug";
  if (isolated && measured_right(analysis.nodes[*isolated], Mode::in_place) && in_place.value_or(SIZE_MAX) > *isolated)
    return "compiled alone, node '" + analysis.nodes[*isolated].node +
           "' diverges, but within the whole graph it does not: the backend compiles it differently in context";
  return std::nullopt;
}

}  // namespace

const char* to_string(Mode mode) { return mode == Mode::isolated ? "isolated" : "in_place"; }

Findings findings_of(const Analysis& analysis) {
  Findings findings;
  auto isolated = first_diverging(analysis, Mode::isolated);
  auto in_place = first_diverging(analysis, Mode::in_place);
  if (isolated) findings.isolated_divergence = analysis.nodes[*isolated].node;
  if (in_place) findings.in_place_divergence = analysis.nodes[*in_place].node;
  if (isolated || in_place)
    findings.first_divergence = analysis.nodes[std::min(isolated.value_or(SIZE_MAX), in_place.value_or(SIZE_MAX))].node;
  findings.fusion = disagreement(analysis, isolated, in_place);
  for (const NodeAnalysis& node : analysis.nodes) {
    bool compiled_varies = false;
    bool fp64_varies = false;
    bool failed = false;
    for (Mode mode : {Mode::isolated, Mode::in_place}) {
      const auto& result = node.result(mode);
      if (!result) continue;
      failed = failed || result->failure.has_value();
      if (!result->measurement) continue;
      compiled_varies = compiled_varies || !result->measurement->compiled_deterministic;
      fp64_varies = fp64_varies || !result->measurement->fp64_deterministic;
    }
    if (node.in_place && node.in_place->measurement && node.in_place->measurement->measured) ++findings.in_place_measured;
    if (compiled_varies) findings.compiled_nondeterministic.push_back(node.node);
    if (fp64_varies) findings.fp64_nondeterministic.push_back(node.node);
    if (failed) ++findings.failed_nodes;
  }
  return findings;
}

}  // namespace minifyd::analysis
