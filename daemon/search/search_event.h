// What a runner reports as it searches (a step begun, a reduction accepted, a candidate that did not
// fail again), and where the reports go: the log and the observer, or a lineage's parent.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "daemon/search/search_observer.h"
#include "daemon/search/search_state.h"

namespace minifyd::search {

// A candidate the search accepts, for its log line and report step.
struct Acceptance {
  std::string_view strategy;
  std::size_t granularity = 0;
  std::size_t nodes_before = 0;
};

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

// Where a runner's events go. Called on the runner's thread.
class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void emit(SearchEvent event) = 0;
};

// The search's own events: accepted reductions logged (info) and warnings (warn), each told to the
// observer, if there is one.
class ObserverSink final : public EventSink {
 public:
  explicit ObserverSink(SearchObserver* observer) : observer_(observer) {}
  void emit(SearchEvent event) override;

 private:
  SearchObserver* observer_;
};

}  // namespace minifyd::search
