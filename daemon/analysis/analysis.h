// What `minify analyze` found (docs/analyze.md): each node's compiled value against eager and the
// fp64 reference, read in two ways, and what follows from them: the first divergence, whether the
// two ways disagree (a fusion bug), and whether the compiled graph and the fp64 reference are
// deterministic.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "protocol/value_measurement.h"
#include "protocol/verdict.h"

namespace minifyd::analysis {

// How a node's compiled value is read: the node compiled and run alone on its stored eager inputs,
// or the whole graph compiled once with the value exposed.
enum class Mode { isolated, in_place };
const char* to_string(Mode mode);

// What one mode learned of one node: a measurement, or the failure that left none.
struct NodeResult {
  std::optional<protocol::ValueMeasurement> measurement;
  std::optional<protocol::Verdict> failure;
  std::string failed;  // whose failure: "compiled" or "eager"

  bool diverges() const { return measurement && measurement->diverges; }
};

struct NodeAnalysis {
  std::string node;
  std::string op;
  std::size_t position = 0;  // among the graph's nodes, placeholders included
  std::optional<NodeResult> isolated;
  std::optional<NodeResult> in_place;

  const std::optional<NodeResult>& result(Mode mode) const { return mode == Mode::isolated ? isolated : in_place; }
};

struct Analysis {
  std::string backend;
  nlohmann::json backend_options = nlohmann::json::object();
  std::vector<Mode> modes;
  std::vector<NodeAnalysis> nodes;  // the call_function nodes, in graph order
  // Where the original stops running in eager, when it does: its nodes from there on are measured
  // against nothing.
  std::optional<protocol::Verdict> eager_failure;
  std::string exposure;  // how the in-place run read values (protocol's exposure_outputs or _hooks)
  // The in-place run's failure, which leaves every node without an in-place result.
  std::optional<NodeResult> in_place_failure;
  std::uint64_t requests = 0;  // worker requests made, the propagation isolated mode needs included
};

// What follows from an analysis.
struct Findings {
  std::optional<std::string> first_divergence;  // the earliest node either mode saw diverge
  std::optional<std::string> isolated_divergence;
  std::optional<std::string> in_place_divergence;
  // The modes disagree on the first divergence of either: what that means, in words.
  std::optional<std::string> fusion;
  std::vector<std::string> compiled_nondeterministic;  // nodes whose compiled value differed between runs
  std::vector<std::string> fp64_nondeterministic;      // nodes whose fp64 value differed between runs
  std::size_t failed_nodes = 0;  // nodes with a failure in some mode
  // Nodes whose compiled value the in-place run could read (a compiler's hooks see only the values
  // it keeps in buffers of their own; the rest are fused into other kernels).
  std::size_t in_place_measured = 0;
};

Findings findings_of(const Analysis& analysis);

}  // namespace minifyd::analysis
