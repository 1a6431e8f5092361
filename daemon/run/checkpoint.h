// A run's checkpoint (OUT_DIR/checkpoint.json): everything `minify run --resume` needs to continue
// a killed search where it stood, written atomically after every accepted reduction. The search is
// memoryless between reductions (the driver restarts its loop from the accepted state), so the
// resumed search makes the same choices the uninterrupted one would have.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/expected.h"
#include "common/graph_document.h"
#include "daemon/bisect/bisect_result.h"
#include "daemon/run/generated_code.h"
#include "daemon/run/run_spec.h"
#include "daemon/search/search_state.h"
#include "daemon/shrink/shrink_result.h"
#include "daemon/verdict/failure_signature.h"
#include "protocol/run_totals.h"
#include "protocol/worker_messages.h"

namespace minifyd::run {

inline constexpr const char* checkpoint_file_name = "checkpoint.json";

// A graph's size and a run's totals are the protocol's: checkpoints, `minify run --json` and the
// daemon's replies encode them alike.
using protocol::GraphShape;
using protocol::RunTotals;

GraphShape shape_of(const search::SearchState& state);

struct AcceptedStep {
  std::string strategy;
  std::size_t granularity = 0;
  GraphShape shape;         // after the step
  std::uint64_t queries = 0;  // of the whole run, when the step was accepted
};

// What the analysis of the original found, when the spec asked for one (RunSpec::analyze,
// analyze_first); its files are kept where the run keeps its outputs (RunPlace::save_analysis).
struct OriginalAnalysis {
  std::optional<std::string> first_divergence;  // a node of the original; unset: none diverged
  std::uint64_t requests = 0;  // the worker requests it made (Analysis::requests)
  double seconds = 0;
};

struct CachedVerdict {
  std::string hash;  // a candidate's
  bool fails = false;
  bool operator==(const CachedVerdict& other) const { return hash == other.hash && fails == other.fails; }
};

struct Checkpoint {
  RunSpec spec;
  std::optional<verdict::FailureSignature> signature;  // unset until the sanity check (or with --skip-sanity)
  std::string original_hash;
  GraphShape original;
  // The original's data in the store (unset in checkpoints of runs begun before it was kept).
  std::optional<shrink::DataSize> original_data;
  // The last accepted state (the original before the first). Its eager values, the intermediates of
  // the state the run began from (in the run's store), are saved once they have come: a checkpoint
  // saved before has none, and the run that resumes it propagates its state again.
  search::SearchState state;
  std::optional<OriginalAnalysis> analysis;
  // The original under plain PyTorch (run/plain_check.h), for the torch.compile backends once checked.
  std::optional<protocol::PlainCheck> plain_check;
  // What shrinking the minimized graph's data did (RunSpec::shrink_inputs), once the search has finished.
  std::optional<shrink::InputShrink> input_shrink;
  // What the bisect of the minimized graph found (RunSpec::bisect), once the search has finished.
  std::optional<bisect::BisectResult> bisect;
  // Inductor's code for the minimized graph and its failing kernel, once the search has finished.
  std::optional<GeneratedCode> generated_code;
  // The verdict cache, by candidate hash, valid for the evaluation key it was made under.
  std::string verdicts_key;
  std::vector<CachedVerdict> verdicts;
  std::vector<AcceptedStep> steps;
  RunTotals totals;
  std::string stop;  // why the last session ended ("" while one is running)
  bool finished = false;  // the outputs are written; nothing to resume
};

nlohmann::json encode(const AcceptedStep& step);
Expected<void> decode(const JsonView& view, AcceptedStep& step);
nlohmann::json encode(const OriginalAnalysis& analysis);
Expected<void> decode(const JsonView& view, OriginalAnalysis& analysis);
nlohmann::json encode(const CachedVerdict& verdict);
Expected<void> decode(const JsonView& view, CachedVerdict& verdict);

// The checkpoint as JSON (format minifyd.checkpoint), for a file or the daemon's job store.
nlohmann::json encode(const Checkpoint& checkpoint);
// Errors name the field; an invalid graph is corrupt.
Expected<Checkpoint> decode_checkpoint(const nlohmann::json& json);

Expected<void> write_checkpoint(const Checkpoint& checkpoint, const std::filesystem::path& out_dir);
// Errors name the file and the field; a directory without a checkpoint is not_found.
Expected<Checkpoint> read_checkpoint(const std::filesystem::path& out_dir);

}  // namespace minifyd::run
