// How long a run's candidates may take when the user gave no --timeout: a multiple of what the
// original itself took, so that a hang costs about what a query costs instead of the backend's
// ceiling (600 s for the torch.compile backends).
#pragma once

#include <chrono>

namespace minifyd::run {

// The multiple of the original's compile + run a candidate may take: a candidate is smaller than the
// original, but its compile may miss caches the original's filled, and it shares the machine's
// cores with the other workers' compiles.
inline constexpr int timeout_multiple = 4;
// The least time a candidate gets, whatever the original took: a worker's first compile pays
// one-time costs (a cold compiler, the C++ compiler's start) that a fast original hides.
inline constexpr std::chrono::milliseconds timeout_floor{20'000};

// The candidates' time limit after the original took `original` (its compile + run as the worker
// measured them, or until its worker died): timeout_multiple times that, at least timeout_floor,
// at most `ceiling` (the backend's default).
std::chrono::milliseconds timeout_following_original(std::chrono::milliseconds original,
                                                     std::chrono::milliseconds ceiling);

}  // namespace minifyd::run
