// A lineage: a search going on ahead of its parent on a thread of its own (search/speculation.h
// says when and why), and the hand-over of its events, which count only once the parent adopts it.
#pragma once

#include <atomic>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "daemon/search/search_event.h"
#include "daemon/search/search_status.h"

namespace minifyd::search {

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
class EventRelay final : public EventSink {
 public:
  void emit(SearchEvent event) override;
  void forward_to(EventQueue& parent);

 private:
  std::mutex mutex_;
  std::vector<SearchEvent> held_;
  EventQueue* parent_ = nullptr;
};

// One lineage's thread. The body gets the stop flag (the lineage's search treats it as an
// interrupt) and the relay its events go to; its outcome's counters start from the parent's.
class Lineage {
 public:
  using Body = std::function<SearchOutcome(const std::atomic<bool>& stop, EventRelay& events)>;

  // `on_done` runs on the lineage's thread once done() holds (to wake a parent waiting for it).
  Lineage(Body body, std::function<void()> on_done);
  ~Lineage();  // stops and joins
  Lineage(const Lineage&) = delete;
  Lineage& operator=(const Lineage&) = delete;

  void stop() { stop_ = true; }
  bool done() const { return done_; }
  EventRelay& events() { return events_; }
  // Blocks until the thread ends; once.
  SearchOutcome join();

 private:
  std::atomic<bool> stop_{false};
  std::atomic<bool> done_{false};
  EventRelay events_;
  std::optional<SearchOutcome> outcome_;
  std::thread thread_;
};

}  // namespace minifyd::search
