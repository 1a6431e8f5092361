// The time the search's time budget is measured in, injected so tests never sleep.
#pragma once

#include <chrono>

namespace minifyd::search {

class Clock {
 public:
  virtual ~Clock() = default;
  // Monotonic. Called from the search's thread only.
  virtual std::chrono::steady_clock::time_point now() const = 0;
};

class SteadyClock final : public Clock {
 public:
  std::chrono::steady_clock::time_point now() const override { return std::chrono::steady_clock::now(); }
};

}  // namespace minifyd::search
