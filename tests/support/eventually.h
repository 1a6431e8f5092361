// Waiting for a condition that another thread or process makes true, without a fixed sleep.
#pragma once

#include <chrono>
#include <thread>

namespace minifyd::test {

// Polls `condition()` every millisecond until it holds or `timeout` passes; returns whether it held.
template <class Condition>
bool eventually(Condition condition, std::chrono::milliseconds timeout = std::chrono::seconds(2)) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

}  // namespace minifyd::test
