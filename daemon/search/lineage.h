// Speculation past slow candidates. A hanging candidate costs the whole timeout, and on a chain of
// hangs the sequential search pays it once per accepted reduction and once more per re-verification.
// When the verdict that decides the search's next move is slow to come, a lineage carries the search
// on, on its own thread, as if that candidate had failed; its own slow candidates start lineages in
// turn, so the hangs of a whole chain run at once. When the candidate does fail, the parent adopts
// the lineage (its result is the search's); when it passes, the lineage is stopped and its queries
// were wasted. Either way the result is the sequential search's.
#pragma once

#include <atomic>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/expected.h"
#include "daemon/search/search_observer.h"
#include "daemon/search/search_state.h"
#include "daemon/search/search_status.h"

namespace minifyd::search {

// An accepted reduction, a warning or a progress report, on its way to the search's observer.
struct SearchEvent {
  SearchProgress progress;
  std::optional<SearchState> accepted;  // set for an accepted reduction
  std::string log_line;                 // logged once the event is known to be on the search's path
  bool warning = false;                 // log_line is a warning (nothing accepted)

  // Whether the event belongs to the search's path (a lineage holds it until adopted), rather than
  // being a progress report, of which only the latest matters.
  bool on_path() const { return accepted.has_value() || warning; }
};

// Events handed from a lineage's thread to its parent's, which takes them on its own thread.
class EventQueue {
 public:
  void push(SearchEvent event);
  std::vector<SearchEvent> take_all();

 private:
  std::mutex mutex_;
  std::vector<SearchEvent> events_;
};

// A lineage's events: held while the lineage may still be wrong (progress reports are dropped, only
// the latest would matter), then forwarded to the parent's queue, in order, once adopted; a stopped
// lineage's are never seen.
class EventRelay {
 public:
  void emit(SearchEvent event);
  void forward_to(EventQueue& parent);

 private:
  std::mutex mutex_;
  std::vector<SearchEvent> held_;
  EventQueue* parent_ = nullptr;
};

// How a lineage ended, for its parent.
struct LineageOutcome {
  std::optional<SearchState> best;  // unset when rejected, or stopped before confirming its start
  StopReason stop{};
  std::optional<Error> error;
  SearchCounters counters;  // from the parent's figures at the start, descendants included
  // The re-verification it started with passed: the candidate it continued from does not fail
  // again, so the parent goes on as if the candidate had been rejected.
  bool rejected = false;
};

// One lineage's thread. The body gets the stop flag (the lineage's search treats it as an
// interrupt) and the relay its events go to.
class Lineage {
 public:
  using Body = std::function<LineageOutcome(const std::atomic<bool>& stop, EventRelay& events)>;

  explicit Lineage(Body body);
  ~Lineage();  // stops and joins
  Lineage(const Lineage&) = delete;
  Lineage& operator=(const Lineage&) = delete;

  void stop() { stop_ = true; }
  bool done() const { return done_; }
  EventRelay& events() { return events_; }
  // Blocks until the thread ends; once.
  LineageOutcome join();

 private:
  std::atomic<bool> stop_{false};
  std::atomic<bool> done_{false};
  EventRelay events_;
  std::optional<LineageOutcome> outcome_;
  std::thread thread_;
};

}  // namespace minifyd::search
