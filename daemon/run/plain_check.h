// The plain check (docs/cli.md): once a run's sanity check found the original failing under a
// torch.compile backend, the original's after_aot repro.py runs in plain PyTorch, in a fresh python
// outside the workers (no sandbox, heap checks or calling convention of ours), and a failure that it
// does not show there stops the run (search::StopReason::unconfirmed) with that said: a verdict must be
// what the user's own process shows.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "common/expected.h"
#include "common/graph_document.h"
#include "common/json_view.h"
#include "daemon/run/run_spec.h"
#include "daemon/verdict/failure_signature.h"
#include "protocol/run_totals.h"

namespace minifyd::run {

// What the plain check adds to the candidates' time limit: a fresh python imports torch and Inductor,
// which the warm worker had done before its sanity check was timed.
inline constexpr std::chrono::seconds plain_check_start_allowance{60};

// Whether the spec's backend is one the plain check is for: a torch.compile backend (nothing but
// minifyd's worker runs a backend of the C++ worker).
bool has_plain_check(const verdict::EvaluationSpec& evaluation);

// Why the spec's original is not checked under plain PyTorch although its backend has the check, or ""
// when it is: no sanity check (--skip-sanity), or a check PyTorch's repro does not make (--nan).
std::string plain_check_skip_reason(const RunSpec& spec);

protocol::PlainCheck plain_check_skipped(const std::string& why);

// How the repro ended, as minifyd/plain_check.py prints it.
struct PlainRun {
  std::optional<std::int64_t> exit;  // unset when a signal ended it or it timed out
  std::optional<std::string> signal;  // "SIGSEGV" when a signal ended it
  bool timed_out = false;
  double seconds = 0;
  std::string stderr_tail;  // its stderr's end
  std::string last_line;    // its stderr's last line
};
Expected<void> decode(const JsonView& view, PlainRun& run);

// The plain check's outcome for `run` (given `timeout`) against the worker's verdict on the original:
// fails (the same kind of failure: the exception's type in the repro's traceback, a signal for a crash,
// PyTorch's AccuracyError for wrong numbers, a hang for a timeout), differs, or passes.
protocol::PlainCheck judge_plain_run(const PlainRun& run, const verdict::FailureSignature& worker,
                                     std::chrono::milliseconds timeout);

struct PlainCheckInput {
  std::string python;                  // the run's --python
  const GraphDocument* original = nullptr;
  std::filesystem::path store;         // holds the original's blobs
  const verdict::EvaluationSpec* evaluation = nullptr;
  std::chrono::milliseconds timeout{0};  // for the repro, start included
  const std::atomic<bool>* cancel = nullptr;  // once set, the repro is stopped (its result is not wanted)
};

// Writes the original with its repro.py into a scratch directory and runs it: how it ended, or why it
// could not be run (no python, no scratch space).
Expected<PlainRun> run_under_plain_pytorch(const PlainCheckInput& input);
// The check of `run` against the worker's verdict (judge_plain_run); one that could not be run is
// skipped, saying why, and never stops the run.
protocol::PlainCheck judge_plain_check(const Expected<PlainRun>& run, const verdict::FailureSignature& worker,
                                       std::chrono::milliseconds timeout);
// run_under_plain_pytorch(), then judge_plain_check().
protocol::PlainCheck check_under_plain_pytorch(const PlainCheckInput& input, const verdict::FailureSignature& worker);

// Whether the check leaves the run to go on: its failure shows, or the check was skipped.
bool plain_check_confirms(const protocol::PlainCheck& check);

}  // namespace minifyd::run
