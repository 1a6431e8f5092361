// The one point where the search lets work run ahead of it: the verdict that decides its next move
// (its front) is slow to come. The step runner (search_runner.h) reports its front here and reads
// alone without it; speculation (search/speculation.h) is what runs ahead.
#pragma once

#include <chrono>
#include <optional>
#include <string_view>

#include "daemon/search/search_event.h"
#include "daemon/search/search_state.h"
#include "daemon/search/search_status.h"

namespace minifyd::search {

class SearchRunner;

// How often a runner with a lookahead looks up from its waits: to report its front, to notice an
// interrupt.
constexpr std::chrono::milliseconds lookahead_interval{5};

// The verdict a runner waits for to decide its next move: a step's first undecided candidate, or a
// state the search goes on from when it fails (the sanity check, a re-verification).
struct Front {
  const SearchState& state;
  // How the step accepts the candidate once it fails (re-verified, then recorded); unset for a
  // state under a check, which the search goes on from as it is.
  std::optional<Acceptance> acceptance;
  std::chrono::steady_clock::time_point submitted;  // handed to the evaluator
  // Its evaluation was slow before (a lineage re-verifying the candidate it went ahead of): work
  // may go ahead at once.
  bool known_slow = false;
  // The original under the sanity check: work ahead of it starts with the search's first tries
  // (search_from_original).
  bool original = false;
  // A candidate under re-verification: the step that accepted it, after which work ahead of it goes
  // on (search_after); empty for other checks.
  std::string_view accepted_by = {};
};

// Called on the runner's thread. At most one piece of work runs ahead of a runner at a time, from
// its current front.
class Lookahead {
 public:
  virtual ~Lookahead() = default;
  // The front's verdict is pending: reported every lookahead_interval while the runner waits for
  // it, and at once when it is known_slow. May start work that searches on from the front as if it
  // failed.
  virtual void front_pending(const SearchRunner& runner, const Front& front) = 0;
  // The front passed, or the runner no longer waits for it (its step ended, it stopped): the work
  // ahead, if any, is stopped. Returns what it cost, to be added to the runner's counters.
  virtual SearchCounters front_passed() = 0;
  // The front failed: waits for the work ahead of it to end, passing its events on to `events`, and
  // returns the search's outcome from the front on, its counters the runner's from now on (its own
  // work included); nullopt when nothing went ahead.
  virtual std::optional<SearchOutcome> front_failed(const SearchRunner& runner, EventSink& events) = 0;
};

}  // namespace minifyd::search
