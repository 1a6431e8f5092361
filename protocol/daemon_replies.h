// The bodies of minifyd's replies (docs/daemon.md), one struct per request type, with what they
// carry: a job's description, a query's result, the daemon's figures. On the wire each reply also
// has "ok": true (ok_reply in daemon_messages.h) and the request's "tag" when it had one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/expected.h"
#include "common/json_view.h"
#include "protocol/job_events.h"
#include "protocol/json_fields.h"
#include "protocol/run_totals.h"
#include "protocol/verdict.h"
#include "protocol/worker_messages.h"

namespace minifyd::protocol {

// A job as status, list and watch describe it.
struct JobInfo {
  std::int64_t id = 0;
  std::string state;  // queued, running, done, failed or cancelled
  std::int64_t priority = 0;
  std::string graph;  // the graph directory it was submitted from
  double submitted_at = 0;  // unix seconds
  std::optional<double> started_at;
  std::optional<double> finished_at;
  std::int64_t sessions = 0;  // how many times a run of it started
  std::optional<std::string> error;  // failed: why
  bool cancel_requested = false;     // on the wire only when true
  std::optional<std::int64_t> submitter_uid;  // the uid that submitted it (none for jobs of older daemons)
  // Where it stands: its last progress event, or, once done, its end event with the run's summary.
  std::optional<JobEvent> progress;
};
nlohmann::json encode(const JobInfo& job);
Expected<void> decode(const JsonView& view, JobInfo& job);

struct SubmitReply {
  std::int64_t id = 0;  // the new job's
};
nlohmann::json encode(const SubmitReply& reply);
Expected<void> decode(const JsonView& view, SubmitReply& reply);

// One job's ("job"), or without a job in the request, as list, every job's ("jobs").
struct StatusReply {
  std::optional<JobInfo> job;
  std::vector<JobInfo> jobs;
};
nlohmann::json encode(const StatusReply& reply);
// Errors: neither "job" nor "jobs", and those of their decoding.
Expected<void> decode(const JsonView& view, StatusReply& reply);

struct ListReply {
  std::vector<JobInfo> jobs;
};
nlohmann::json encode(const ListReply& reply);
Expected<void> decode(const JsonView& view, ListReply& reply);

// The job as it is when the watch begins; its events follow (job_events.h).
struct WatchReply {
  JobInfo job;
};
nlohmann::json encode(const WatchReply& reply);
Expected<void> decode(const JsonView& view, WatchReply& reply);

// The finished job's summary, flat, and where its outputs were written: the shape of
// `minify run --json` (which prints this too, for its own output directory).
struct ResultReply {
  RunSummary summary;
  std::string out;
};
nlohmann::json encode(const ResultReply& reply);
Expected<void> decode(const JsonView& view, ResultReply& reply);

struct CancelJobReply {
  std::int64_t job = 0;
  std::string state;  // the job's state after the request: cancelled, or running until it stops
};
nlohmann::json encode(const CancelJobReply& reply);
Expected<void> decode(const JsonView& view, CancelJobReply& reply);

// One evaluation's report, whether `minify query` ran it on a worker of its own or the daemon's.
struct QueryResult {
  bool fails = false;  // the verdict counts as the failure the check looks for
  Verdict verdict;
  std::string summary;  // one line for humans
  std::optional<double> compile_ms;  // when the worker answered
  std::optional<double> run_ms;
};
nlohmann::json encode(const QueryResult& result);
Expected<void> decode(const JsonView& view, QueryResult& result);

struct QueryReply {
  QueryResult result;
};
nlohmann::json encode(const QueryReply& reply);
Expected<void> decode(const JsonView& view, QueryReply& reply);

// The worker pools' figures, added up over every pool started.
struct PoolFigures {
  std::size_t slots = 0;
  std::uint64_t requests = 0;
  std::uint64_t workers_started = 0;
  std::uint64_t crashes_contained = 0;
  std::uint64_t timeouts = 0;
  std::uint64_t protocol_errors = 0;
  std::uint64_t cancelled = 0;
  std::vector<WorkerHello> workers;  // the hello of each worker running
};
nlohmann::json encode(const PoolFigures& pool);
Expected<void> decode(const JsonView& view, PoolFigures& pool);

struct QueueFigures {
  std::size_t waiting = 0;  // candidates queued for a worker
  std::size_t running = 0;  // candidates on a worker
};
nlohmann::json encode(const QueueFigures& queue);
Expected<void> decode(const JsonView& view, QueueFigures& queue);

// How many jobs the job store holds in each state.
struct JobStateCounts {
  std::size_t queued = 0;
  std::size_t running = 0;
  std::size_t done = 0;
  std::size_t failed = 0;
  std::size_t cancelled = 0;
};
nlohmann::json encode(const JobStateCounts& counts);
Expected<void> decode(const JsonView& view, JobStateCounts& counts);

// Added up over the jobs running, from their last progress.
struct RunningJobFigures {
  std::size_t queries = 0;
  std::size_t cache_hits = 0;
};
nlohmann::json encode(const RunningJobFigures& figures);
Expected<void> decode(const JsonView& view, RunningJobFigures& figures);

struct ConnectionFigures {
  std::uint64_t open = 0;
  std::uint64_t accepted = 0;
  std::uint64_t refused = 0;
  std::uint64_t requests = 0;
  std::uint64_t malformed = 0;
  std::uint64_t dropped = 0;
};
nlohmann::json encode(const ConnectionFigures& connections);
Expected<void> decode(const JsonView& view, ConnectionFigures& connections);

// A daemon of a shared queue, from its last heartbeat.
struct HostFigures {
  std::string name;
  std::size_t workers = 0;
  std::string gpus;  // "0,1"; "" for CPU workers
  std::size_t running_jobs = 0;
  double started_at = 0;    // unix seconds
  double heartbeat_at = 0;  // unix seconds, the queue database's clock
};
nlohmann::json encode(const HostFigures& host);
Expected<void> decode(const JsonView& view, HostFigures& host);

struct StatsReply {
  PoolFigures pool;
  QueueFigures queue;
  JobStateCounts jobs;
  RunningJobFigures running_jobs;
  ConnectionFigures connections;
  std::size_t max_running_jobs = 0;
  std::vector<HostFigures> hosts;  // a shared queue's daemons, this one too; empty for SQLite's
};
nlohmann::json encode(const StatsReply& reply);
Expected<void> decode(const JsonView& view, StatsReply& reply);

struct DaemonShutdownReply {
  std::size_t running_jobs = 0;  // stopping now, to resume at the next start
};
nlohmann::json encode(const DaemonShutdownReply& reply);
Expected<void> decode(const JsonView& view, DaemonShutdownReply& reply);

// A reply (its value, "ok": true checked) decoded as `Reply`. Errors, of kind io since the daemon
// sent them: a missing or mistyped field, named by its path ("job.progress.nodes: ...").
template <class Reply>
Expected<Reply> decode_daemon_reply(const nlohmann::json& reply, std::string_view request_type) {
  auto decoded = decode_message<Reply>(reply);
  if (!decoded)
    return make_error(ErrorKind::io, "minifyd sent a malformed " + std::string(request_type) +
                                         " reply: " + decoded.error().message);
  return decoded;
}

}  // namespace minifyd::protocol
