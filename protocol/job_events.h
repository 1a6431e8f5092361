// The events minifyd streams on a connection that watches a job (docs/daemon.md): progress while
// the job searches, then one end. A job's status carries the last of them too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>

#include <nlohmann/json.hpp>

#include "common/expected.h"
#include "common/json_view.h"
#include "protocol/run_totals.h"

namespace minifyd::protocol {

// {"event": "progress", ...}: where the search stands.
struct ProgressEvent {
  std::int64_t job = 0;
  std::string strategy;  // empty outside a strategy (sanity and final checks)
  std::size_t granularity = 0;
  std::size_t nodes = 0;
  std::size_t start_nodes = 0;
  std::size_t queries = 0;
  std::size_t cache_hits = 0;
  double elapsed_seconds = 0;  // since this session of the job began
};

// The end event's states besides a job's final ones (done, failed, cancelled): the daemon is
// stopping and the job resumes from its checkpoint at the next start.
inline constexpr const char* job_state_interrupted = "interrupted";

// {"event": "end", "job", "state", ...}: the job ended, or stopped with the daemon.
struct EndEvent {
  std::int64_t job = 0;
  std::string state;                   // done, failed, cancelled or interrupted
  std::optional<std::string> error;    // failed: why
  std::optional<std::string> message;  // interrupted: what happens to the job
  // done: the run's summary, flat beside the fields above; unset when the job had ended before
  // the watch began, or another daemon of a shared queue ran it.
  std::optional<RunSummary> summary;
};

using JobEvent = std::variant<ProgressEvent, EndEvent>;

nlohmann::json encode(const ProgressEvent& event);
Expected<void> decode(const JsonView& view, ProgressEvent& event);
nlohmann::json encode(const EndEvent& event);
// The summary is read when the event has its "stop".
Expected<void> decode(const JsonView& view, EndEvent& event);
nlohmann::json encode(const JobEvent& event);
// Errors: no "event", an unknown one, and those of the event's own decode.
Expected<void> decode(const JsonView& view, JobEvent& event);

}  // namespace minifyd::protocol
