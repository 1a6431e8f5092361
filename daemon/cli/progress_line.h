// `minify run`'s live progress line on a terminal (BRIEF "The search"): nodes now / at start,
// queries, cache hits, the current strategy and granularity, elapsed time, rewritten in place.
#pragma once

#include <chrono>
#include <cstdio>

#include "daemon/search/search_observer.h"

namespace minifyd::cli {

class ProgressLine final : public search::SearchObserver {
 public:
  explicit ProgressLine(std::FILE* terminal) : terminal_(terminal) {}
  ~ProgressLine() override { finish(); }

  void on_progress(const search::SearchProgress& progress) override { draw(progress); }
  void on_accepted(const search::SearchState&, const search::SearchProgress& progress) override { draw(progress); }
  // Ends the line so that later output starts on a fresh one.
  void finish();

 private:
  void draw(const search::SearchProgress& progress);

  std::FILE* terminal_;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  bool drawn_ = false;
};

}  // namespace minifyd::cli
