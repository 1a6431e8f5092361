// Encoding and decoding of minifyd's replies.
#include "protocol/daemon_replies.h"

namespace minifyd::protocol {
namespace {

constexpr auto job_fields = [](auto& job, auto&& field) {
  field("id", job.id);
  field("state", job.state);
  field("priority", job.priority);
  field("graph", job.graph);
  field("submitted_at", job.submitted_at);
  field("started_at", job.started_at);
  field("finished_at", job.finished_at);
  field("sessions", job.sessions);
  field("error", job.error);
  field("cancel_requested", job.cancel_requested, false);
  field("submitter_uid", job.submitter_uid);
  field("progress", job.progress);
};

constexpr auto status_fields = [](auto& reply, auto&& field) {
  field("job", reply.job);
  field("jobs", reply.jobs, decltype(reply.jobs){});
};

constexpr auto jobs_fields = [](auto& reply, auto&& field) { field("jobs", reply.jobs); };
constexpr auto job_reply_fields = [](auto& reply, auto&& field) { field("job", reply.job); };
constexpr auto submit_fields = [](auto& reply, auto&& field) { field("id", reply.id); };
constexpr auto out_fields = [](auto& reply, auto&& field) { field("out", reply.out); };

constexpr auto cancel_fields = [](auto& reply, auto&& field) {
  field("job", reply.job);
  field("state", reply.state);
};

// The verdict has its own codec (verdict.h); these are the rest.
constexpr auto query_result_fields = [](auto& result, auto&& field) {
  field("fails", result.fails);
  field("summary", result.summary);
  field("compile_ms", result.compile_ms);
  field("run_ms", result.run_ms);
};

constexpr auto query_fields = [](auto& reply, auto&& field) { field("result", reply.result); };

// The workers' hellos have their own codec (worker_messages.h); these are the rest.
constexpr auto pool_fields = [](auto& pool, auto&& field) {
  field("slots", pool.slots);
  field("requests", pool.requests);
  field("workers_started", pool.workers_started);
  field("crashes_contained", pool.crashes_contained);
  field("timeouts", pool.timeouts);
  field("protocol_errors", pool.protocol_errors);
  field("cancelled", pool.cancelled);
};

constexpr auto queue_fields = [](auto& queue, auto&& field) {
  field("waiting", queue.waiting);
  field("running", queue.running);
};

constexpr auto job_counts_fields = [](auto& counts, auto&& field) {
  field("queued", counts.queued);
  field("running", counts.running);
  field("done", counts.done);
  field("failed", counts.failed);
  field("cancelled", counts.cancelled);
};

constexpr auto running_jobs_fields = [](auto& figures, auto&& field) {
  field("queries", figures.queries);
  field("cache_hits", figures.cache_hits);
};

constexpr auto connections_fields = [](auto& connections, auto&& field) {
  field("open", connections.open);
  field("accepted", connections.accepted);
  field("refused", connections.refused);
  field("requests", connections.requests);
  field("malformed", connections.malformed);
  field("dropped", connections.dropped);
};

constexpr auto host_fields = [](auto& host, auto&& field) {
  field("name", host.name);
  field("workers", host.workers);
  field("gpus", host.gpus);
  field("running_jobs", host.running_jobs);
  field("started_at", host.started_at);
  field("heartbeat_at", host.heartbeat_at);
};

constexpr auto stats_fields = [](auto& reply, auto&& field) {
  field("pool", reply.pool);
  field("queue", reply.queue);
  field("jobs", reply.jobs);
  field("running_jobs", reply.running_jobs);
  field("connections", reply.connections);
  field("max_running_jobs", reply.max_running_jobs);
  field("hosts", reply.hosts);
};

constexpr auto shutdown_fields = [](auto& reply, auto&& field) { field("running_jobs", reply.running_jobs); };

}  // namespace

nlohmann::json encode(const JobInfo& job) { return encode_fields(job, job_fields); }
Expected<void> decode(const JsonView& view, JobInfo& job) { return decode_fields(view, job, job_fields); }

nlohmann::json encode(const SubmitReply& reply) { return encode_fields(reply, submit_fields); }
Expected<void> decode(const JsonView& view, SubmitReply& reply) { return decode_fields(view, reply, submit_fields); }

nlohmann::json encode(const StatusReply& reply) {
  if (reply.job) return encode_fields(reply, job_reply_fields);
  return encode_fields(reply, jobs_fields);
}
Expected<void> decode(const JsonView& view, StatusReply& reply) {
  if (auto decoded = decode_fields(view, reply, status_fields); !decoded) return decoded.error();
  if (!reply.job && !view.raw().contains("jobs")) return view.error("missing field 'job' (or 'jobs')");
  return {};
}

nlohmann::json encode(const ListReply& reply) { return encode_fields(reply, jobs_fields); }
Expected<void> decode(const JsonView& view, ListReply& reply) { return decode_fields(view, reply, jobs_fields); }

nlohmann::json encode(const WatchReply& reply) { return encode_fields(reply, job_reply_fields); }
Expected<void> decode(const JsonView& view, WatchReply& reply) {
  return decode_fields(view, reply, job_reply_fields);
}

nlohmann::json encode(const ResultReply& reply) { return encode_fields(reply, out_fields, encode(reply.summary)); }
Expected<void> decode(const JsonView& view, ResultReply& reply) {
  if (auto decoded = decode(view, reply.summary); !decoded) return decoded.error();
  return decode_fields(view, reply, out_fields);
}

nlohmann::json encode(const CancelJobReply& reply) { return encode_fields(reply, cancel_fields); }
Expected<void> decode(const JsonView& view, CancelJobReply& reply) {
  return decode_fields(view, reply, cancel_fields);
}

nlohmann::json encode(const QueryResult& result) {
  return encode_fields(result, query_result_fields, {{"verdict", encode(result.verdict)}});
}
Expected<void> decode(const JsonView& view, QueryResult& result) {
  if (auto decoded = decode_fields(view, result, query_result_fields); !decoded) return decoded.error();
  auto verdict_view = view.field("verdict");
  if (!verdict_view) return verdict_view.error();
  auto verdict = decode_verdict(verdict_view->raw());
  if (!verdict) return verdict.error().with_context(verdict_view->path());
  result.verdict = std::move(*verdict);
  return {};
}

nlohmann::json encode(const QueryReply& reply) { return encode_fields(reply, query_fields); }
Expected<void> decode(const JsonView& view, QueryReply& reply) { return decode_fields(view, reply, query_fields); }

nlohmann::json encode(const PoolFigures& pool) {
  nlohmann::json workers = nlohmann::json::array();
  for (const WorkerHello& hello : pool.workers) workers.push_back(encode(hello));
  return encode_fields(pool, pool_fields, {{"workers", std::move(workers)}});
}
Expected<void> decode(const JsonView& view, PoolFigures& pool) {
  if (auto decoded = decode_fields(view, pool, pool_fields); !decoded) return decoded.error();
  pool.workers.clear();
  return view.for_each_item("workers", [&](const JsonView& item) -> Expected<void> {
    auto hello = decode_hello(item.raw());
    if (!hello) return hello.error().with_context(item.path());
    pool.workers.push_back(std::move(*hello));
    return {};
  });
}

nlohmann::json encode(const QueueFigures& queue) { return encode_fields(queue, queue_fields); }
Expected<void> decode(const JsonView& view, QueueFigures& queue) { return decode_fields(view, queue, queue_fields); }

nlohmann::json encode(const JobStateCounts& counts) { return encode_fields(counts, job_counts_fields); }
Expected<void> decode(const JsonView& view, JobStateCounts& counts) {
  return decode_fields(view, counts, job_counts_fields);
}

nlohmann::json encode(const RunningJobFigures& figures) { return encode_fields(figures, running_jobs_fields); }
Expected<void> decode(const JsonView& view, RunningJobFigures& figures) {
  return decode_fields(view, figures, running_jobs_fields);
}

nlohmann::json encode(const ConnectionFigures& connections) {
  return encode_fields(connections, connections_fields);
}
Expected<void> decode(const JsonView& view, ConnectionFigures& connections) {
  return decode_fields(view, connections, connections_fields);
}

nlohmann::json encode(const HostFigures& host) { return encode_fields(host, host_fields); }
Expected<void> decode(const JsonView& view, HostFigures& host) { return decode_fields(view, host, host_fields); }

nlohmann::json encode(const StatsReply& reply) { return encode_fields(reply, stats_fields); }
Expected<void> decode(const JsonView& view, StatsReply& reply) { return decode_fields(view, reply, stats_fields); }

nlohmann::json encode(const DaemonShutdownReply& reply) { return encode_fields(reply, shutdown_fields); }
Expected<void> decode(const JsonView& view, DaemonShutdownReply& reply) {
  return decode_fields(view, reply, shutdown_fields);
}

}  // namespace minifyd::protocol
