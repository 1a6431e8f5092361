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

  void on_progress(const search::SearchProgress& progress) override { draw(progress, elapsed()); }
  void on_accepted(const search::SearchState&, const search::SearchProgress& progress) override {
    draw(progress, elapsed());
  }
  // Redraws the line; `elapsed_seconds` since the search began (`minify watch` gets it from the daemon).
  void draw(const search::SearchProgress& progress, double elapsed_seconds);
  // Ends the line so that later output starts on a fresh one.
  void finish();

 private:
  double elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  }

  std::FILE* terminal_;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  bool drawn_ = false;
};

}  // namespace minifyd::cli
