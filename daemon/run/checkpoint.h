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
#include "daemon/query/failure_signature.h"
#include "daemon/run/run_spec.h"
#include "daemon/search/search_state.h"
#include "protocol/worker_messages.h"

namespace minifyd::run {

inline constexpr const char* checkpoint_file_name = "checkpoint.json";

struct GraphShape {
  std::size_t nodes = 0;    // placeholders and the output node included, as PyTorch counts them
  std::size_t inputs = 0;   // placeholders, stored intermediates fed in place of nodes included
  std::size_t outputs = 0;  // leaves of the returned value
};
GraphShape shape_of(const search::SearchState& state);

struct AcceptedStep {
  std::string strategy;
  std::size_t granularity = 0;
  GraphShape shape;         // after the step
  std::uint64_t queries = 0;  // of the whole run, when the step was accepted
};

// Figures over every session of a run (a resumed run adds to them).
struct RunTotals {
  std::uint64_t queries = 0;
  std::uint64_t cache_hits = 0;
  std::uint64_t crashes_contained = 0;
  std::uint64_t timeouts = 0;
  double wall_seconds = 0;
  std::uint64_t sessions = 0;
};

struct Checkpoint {
  RunSpec spec;
  std::optional<FailureSignature> signature;  // unset until the sanity check (or with --skip-sanity)
  std::string original_hash;
  GraphShape original;
  search::SearchState state;  // the last accepted state (the original before the first)
  std::vector<protocol::PropagatedValue> eager;  // the original's intermediates, in the run's store
  // The verdict cache, by candidate hash, valid for the evaluation key it was made under.
  std::string verdicts_key;
  std::vector<std::pair<std::string, bool>> verdicts;
  std::vector<AcceptedStep> steps;
  RunTotals totals;
  std::string stop;  // why the last session ended ("" while one is running)
  bool finished = false;  // the outputs are written; nothing to resume
};

// The checkpoint as JSON (format minifyd.checkpoint), for a file or the daemon's job store.
nlohmann::json encode(const Checkpoint& checkpoint);
// Errors name the field; an invalid graph is corrupt.
Expected<Checkpoint> decode_checkpoint(const nlohmann::json& json);

Expected<void> write_checkpoint(const Checkpoint& checkpoint, const std::filesystem::path& out_dir);
// Errors name the file and the field; a directory without a checkpoint is not_found.
Expected<Checkpoint> read_checkpoint(const std::filesystem::path& out_dir);

}  // namespace minifyd::run
