// How long passing verdicts take: a verdict pending well beyond that is slow (a hang, most likely),
// and worth speculating past; graphs that take seconds to compile must not start a lineage at
// every step. Thread-safe.
#pragma once

#include <chrono>
#include <cstddef>
#include <mutex>
#include <vector>

namespace minifyd::search {

class PassLatency {
 public:
  void record(std::chrono::steady_clock::duration latency);
  // Twice the median of the latest passing verdicts, or zero before any.
  std::chrono::steady_clock::duration slow_beyond() const;

 private:
  static constexpr std::size_t window = 16;
  mutable std::mutex mutex_;
  std::vector<std::chrono::steady_clock::duration> latest_;  // a ring of the last `window`
  std::size_t next_ = 0;
};

}  // namespace minifyd::search
