// Lineage threads and the hand-over of their events.
#include "daemon/search/lineage.h"

#include <exception>

namespace minifyd::search {

const char* to_string(StopReason reason) {
  switch (reason) {
    case StopReason::finished: return "finished";
    case StopReason::original_passes: return "the original does not fail";
    case StopReason::query_budget: return "query budget spent";
    case StopReason::time_budget: return "time budget spent";
    case StopReason::interrupted: return "interrupted";
    case StopReason::error: return "error";
  }
  return "unknown";
}

SearchCounters& SearchCounters::operator+=(const SearchCounters& other) {
  queries += other.queries;
  cache_hits += other.cache_hits;
  invalid_candidates += other.invalid_candidates;
  unproductive_candidates += other.unproductive_candidates;
  accepted += other.accepted;
  lineages += other.lineages;
  speculative_queries += other.speculative_queries;
  return *this;
}

SearchCounters SearchCounters::operator-(const SearchCounters& other) const {
  SearchCounters difference;
  difference.queries = queries - other.queries;
  difference.cache_hits = cache_hits - other.cache_hits;
  difference.invalid_candidates = invalid_candidates - other.invalid_candidates;
  difference.unproductive_candidates = unproductive_candidates - other.unproductive_candidates;
  difference.accepted = accepted - other.accepted;
  difference.lineages = lineages - other.lineages;
  difference.speculative_queries = speculative_queries - other.speculative_queries;
  return difference;
}

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

Lineage::Lineage(Body body)
    : thread_([this, body = std::move(body)] {
        try {
          outcome_ = body(stop_, events_);
        } catch (const std::exception& e) {  // bad_alloc, most likely: an error for the parent, not an abort
          outcome_ = LineageOutcome{};
          outcome_->stop = StopReason::error;
          outcome_->error = make_error(ErrorKind::io, std::string("speculative search: ") + e.what());
        }
        done_ = true;
      }) {}

Lineage::~Lineage() {
  stop();
  if (thread_.joinable()) thread_.join();
}

LineageOutcome Lineage::join() {
  if (thread_.joinable()) thread_.join();
  return std::move(*outcome_);
}

}  // namespace minifyd::search
