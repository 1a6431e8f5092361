// Where a run keeps its blobs, checkpoints and analysis: a store of its own (minify run's OUT_DIR) or the
// daemon's shared one, under root names of the run's.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "common/content_store.h"
#include "common/expected.h"
#include "daemon/analysis/analysis_files.h"
#include "daemon/run/checkpoint.h"
#include "protocol/worker_messages.h"

namespace minifyd::run {

// Where a run keeps its blobs and checkpoints.
struct RunPlace {
  ContentStore store;
  // Names the run's store roots (PREFIX-original, PREFIX-intermediates, PREFIX-result), so that
  // several runs can share one store.
  std::string root_prefix;
  std::function<Expected<void>(const Checkpoint&)> save_checkpoint;
  // Keeps the files of the original's analysis (RunSpec::analyze) where the outputs go.
  std::function<Expected<void>(const analysis::AnalysisFiles&)> save_analysis;
  // Ends the roots the run writes as it goes (all but the original's): "-s3" for a daemon job's
  // session 3, so that a session that lost its claim (a shared queue's daemon stopped past its
  // lease) never overwrites the roots of the session that took the job over.
  std::string session_suffix;
  // Whether the run, once finished, drops every root but its result's and collects the store; a
  // daemon's job leaves that to the session whose end the job store recorded.
  bool drops_roots = true;
  // The original's blobs import_original() wrote into the store, hashing them, by their files'
  // identity: the run's requests vouch for them, so that its workers do not hash them again.
  std::shared_ptr<protocol::VouchedBlobs> vouched = std::make_shared<protocol::VouchedBlobs>();

  std::string original_root() const { return root_prefix + "-original"; }
  std::string intermediates_root() const { return root_prefix + "-intermediates" + session_suffix; }
  std::string result_root() const { return root_prefix + "-result" + session_suffix; }
  // The blobs of the input shrinking's smaller inputs (shrink/input_shrink.h), until the result roots them.
  std::string shrink_root() const { return root_prefix + "-shrink" + session_suffix; }
};

}  // namespace minifyd::run
