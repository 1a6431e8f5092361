// What a run's session reports to and is told by: progress, an interrupt, speculation, the python of the
// torch.compile backends, the timeline, the plain check started before it, and what runs beside its end.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "common/expected.h"
#include "daemon/run/checkpoint.h"
#include "daemon/run/plain_confirmation.h"
#include "daemon/run/timeline.h"
#include "daemon/search/search_observer.h"

namespace minifyd::run {

// What a session reports to, what stops it early, and whether it speculates.
struct SessionHooks {
  search::SearchObserver* observer = nullptr;  // progress, on the calling thread
  // Set from any thread: the search stops before its next query (stop interrupted), leaving a
  // checkpoint to continue from.
  const std::atomic<bool>* interrupt = nullptr;
  // SpeculationOptions::after; worth setting only when the pool parks slow requests.
  std::optional<std::chrono::milliseconds> speculate_after;
  // The torch.compile backends' python, for the plain check of the original (run/plain_check.h).
  std::function<Expected<std::string>()> python;
  Timeline* timeline = nullptr;  // the run's phases are marked there, if anywhere
  // The plain check of the original, started before the session by start_plain_check(); unset: the
  // session starts it itself.
  PlainConfirmation* plain_check = nullptr;
  // Called with the finished run's checkpoint (the search minimized, its after-search answers in) while
  // the plain check still runs: whatever does not depend on its verdict can be done meanwhile. If the
  // check then refutes the original, the run ends with nothing minimized (RunResult::stop unconfirmed).
  std::function<void(const Checkpoint&)> before_plain_verdict{};
  // Called once the session needs the pool no more (its search and after-search answers are in):
  // `minify run`'s workers exit meanwhile, while the run's store is cleaned and its outputs written.
  std::function<void()> pool_done{};
};

// The torch.compile backends' python the hooks name; an error when they name none.
Expected<std::string> python_of(const SessionHooks& hooks);

}  // namespace minifyd::run
