// Lineage threads and the hand-over of their events.
#include "daemon/search/lineage.h"

#include <exception>
#include <string>

namespace minifyd::search {

void EventQueue::push(SearchEvent event) {
  std::lock_guard<std::mutex> lock(mutex_);
  events_.push_back(std::move(event));
}

std::vector<SearchEvent> EventQueue::take_all() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<SearchEvent> taken;
  taken.swap(events_);
  return taken;
}

void EventRelay::emit(SearchEvent event) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (parent_ != nullptr) parent_->push(std::move(event));
  else if (event.on_path()) held_.push_back(std::move(event));
}

void EventRelay::forward_to(EventQueue& parent) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (SearchEvent& event : held_) parent.push(std::move(event));
  held_.clear();
  parent_ = &parent;
}

Lineage::Lineage(Body body, std::function<void()> on_done)
    : thread_([this, body = std::move(body), on_done = std::move(on_done)] {
        try {
          outcome_ = body(stop_, events_);
        } catch (const std::exception& e) {  // bad_alloc, most likely: an error for the parent, not an abort
          outcome_ = SearchOutcome{};
          outcome_->stop = StopReason::error;
          outcome_->error = make_error(ErrorKind::io, std::string("speculative search: ") + e.what());
        }
        done_ = true;
        if (on_done) on_done();
      }) {}

Lineage::~Lineage() {
  stop();
  if (thread_.joinable()) thread_.join();
}

SearchOutcome Lineage::join() {
  if (thread_.joinable()) thread_.join();
  return std::move(*outcome_);
}

}  // namespace minifyd::search
