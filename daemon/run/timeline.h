// A run's timeline (`minify run --timeline FILE`): one JSON line per thing that takes time, as it
// happens: workers launched, up, retired; requests sent and answered (with the worker's own load,
// compile, run and check times); the run's phases. Times are seconds since the timeline opened, on the
// steady clock. bench/query_breakdown.py turns it into where each query's time went.
#pragma once

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <string_view>

#include <nlohmann/json.hpp>

#include "common/expected.h"
#include "daemon/pool/pool_event.h"

namespace minifyd::run {

class Timeline {
 public:
  // Truncates `path`; an error names it when it cannot be written.
  static Expected<std::unique_ptr<Timeline>> open(const std::filesystem::path& path);

  // The pool's events (PoolConfig::on_event), told on its io thread.
  pool::PoolEventSink pool_sink();
  // A phase of the run begins or ends (`what`: plain_check, search, after_search, outputs); from any thread.
  void mark(std::string_view what, std::string_view edge);

 private:
  explicit Timeline(std::ofstream out) : out_(std::move(out)) {}
  void write(nlohmann::json line);

  std::mutex mutex_;
  std::ofstream out_;
  std::chrono::steady_clock::time_point opened_ = std::chrono::steady_clock::now();
};

// Marks a phase's begin now and its end when destroyed; does nothing without a timeline.
class TimelinePhase {
 public:
  TimelinePhase(Timeline* timeline, std::string_view what);
  ~TimelinePhase();
  TimelinePhase(const TimelinePhase&) = delete;
  TimelinePhase& operator=(const TimelinePhase&) = delete;

 private:
  Timeline* timeline_;
  std::string_view what_;
};

}  // namespace minifyd::run
