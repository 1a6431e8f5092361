// The median of a ring of latencies.
#include "daemon/search/pass_latency.h"

#include <algorithm>

namespace minifyd::search {

void PassLatency::record(std::chrono::steady_clock::duration latency) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (latest_.size() < window) latest_.push_back(latency);
  else latest_[next_] = latency;
  next_ = (next_ + 1) % window;
}

std::chrono::steady_clock::duration PassLatency::slow_beyond() const {
  std::vector<std::chrono::steady_clock::duration> sorted;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    sorted = latest_;
  }
  if (sorted.empty()) return {};
  auto median = sorted.begin() + static_cast<std::ptrdiff_t>(sorted.size() / 2);
  std::nth_element(sorted.begin(), median, sorted.end());
  return 2 * *median;
}

}  // namespace minifyd::search
