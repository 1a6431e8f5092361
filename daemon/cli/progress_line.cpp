// Drawing the progress line.
#include "daemon/cli/progress_line.h"

#include <string>

namespace minifyd::cli {

void ProgressLine::draw(const search::SearchProgress& progress, double elapsed_seconds) {
  std::string step = progress.strategy.empty() ? "checking"
                                               : std::string(progress.strategy) + " G=" + std::to_string(progress.granularity);
  // \r and "erase to end of line": the line shrinks cleanly when a number gets shorter.
  std::fprintf(terminal_, "\r\033[Kminify: %zu/%zu nodes | %zu queries, %zu cache hits | %s | %.1f s",
               progress.nodes, progress.start_nodes, progress.queries, progress.cache_hits, step.c_str(), elapsed_seconds);
  std::fflush(terminal_);
  drawn_ = true;
}

void ProgressLine::finish() {
  if (!drawn_) return;
  std::fputc('\n', terminal_);
  std::fflush(terminal_);
  drawn_ = false;
}

}  // namespace minifyd::cli
