// The daemon's requests (docs/daemon.md has the protocol). Anything that touches files beyond the
// job store runs off the io thread.
#include <boost/asio/post.hpp>

#include "common/graph_codec.h"
#include "common/json_view.h"
#include "common/log.h"
#include "common/owner_lock.h"
#include "daemon/analysis/analysis_files.h"
#include "daemon/run/output_writer.h"
#include "daemon/search/strategy_registry.h"
#include "daemon/service/daemon.h"
#include "daemon/service/job_result.h"
#include "daemon/service/job_spec.h"
#include "daemon/service/result_retention.h"
#include "daemon/verdict/evaluation_spec.h"
#include "daemon/verdict/failure_check.h"
#include "daemon/verdict/query_result.h"
#include "protocol/daemon_requests.h"
#include "protocol/json_fields.h"

namespace minifyd::service {
namespace {

using Connection = std::shared_ptr<transport::ClientConnection>;

Expected<std::filesystem::path> absolute_dir(const std::string& text, const char* key) {
  std::filesystem::path path(text);
  if (!path.is_absolute()) return make_error(ErrorKind::invalid_input, std::string(key) + ": '" + text + "' is not an absolute path");
  return path.lexically_normal();
}

// A submit is refused while the queue holds config.max_queued_jobs jobs, or its user's
// max_queued_jobs_per_user: its own error, before the graph is read.
Expected<void> room_in_queue(const JobStore& jobs, const DaemonConfig& config, std::int64_t uid) {
  auto counts = jobs.counts();
  if (!counts) return counts.error();
  if (counts->queued >= config.max_queued_jobs)
    return make_error(ErrorKind::unsupported, "the queue is full: " + std::to_string(counts->queued) +
                                                  " jobs wait (minifyd --max-queued-jobs " +
                                                  std::to_string(config.max_queued_jobs) +
                                                  "); submit again once some have started");
  auto own = jobs.queued_by(uid);
  if (!own) return own.error();
  if (*own >= config.max_queued_jobs_per_user)
    return make_error(ErrorKind::unsupported, "uid " + std::to_string(uid) + " has " + std::to_string(*own) +
                                                  " jobs waiting, its share of the queue (minifyd "
                                                  "--max-queued-jobs-per-user " +
                                                  std::to_string(config.max_queued_jobs_per_user) +
                                                  "); submit again once some have started");
  return {};
}

// The submitted graph, validated, and the job's spec; then its blobs in the shared store and the job
// in the job store, in that order (a job never exists without its blobs), under the store's shared
// lock: a daemon of the same queue sweeping orphan roots at its start (under the exclusive lock)
// never sees the root without its job.
// A request's graph.json, read before the spec or evaluation that comes with it, so that a request
// naming no graph is answered naming its path, and decoded once they say which namespaces the job's
// operator libraries add.
struct SubmittedGraph {
  std::filesystem::path file;
  nlohmann::json json;

  Expected<GraphDocument> decode(const OperatorScope& operators) const {
    auto document = decode_graph_document(json, operators);
    if (!document) return document.error().with_context(file.string());
    return document;
  }
};

Expected<SubmittedGraph> read_submitted_graph(const std::filesystem::path& graph_dir) {
  std::filesystem::path file = graph_dir / graph_file_name;
  auto json = read_json_file(file);
  if (!json) return json.error();
  return SubmittedGraph{std::move(file), std::move(*json)};
}

Expected<std::int64_t> submit_job(const protocol::SubmitRequest& request, std::int64_t submitter_uid,
                                  const ContentStore& store, JobStore& jobs, ProgramPools& pools,
                                  const DaemonConfig& config) {
  if (auto room = room_in_queue(jobs, config, submitter_uid); !room) return room.error();
  auto graph_dir = absolute_dir(request.graph_dir, "graph_dir");
  if (!graph_dir) return graph_dir.error();
  auto graph = read_submitted_graph(*graph_dir);
  if (!graph) return graph.error();
  // The spec names the graph it was made for; the job's is the one submitted.
  nlohmann::json spec_json = request.spec;
  if (spec_json.is_object()) spec_json["graph_dir"] = graph_dir->string();
  auto run_spec = protocol::decode_message<run::RunSpec>(JsonView(spec_json, "spec"));
  if (!run_spec) return run_spec.error().with_context("the submit of " + graph_dir->string());
  auto document = graph->decode(run_spec->evaluation.operators());
  if (!document) return document.error();
  if (auto strategies = search::select_strategies(run_spec->strategies); !strategies) return strategies.error();
  if (auto check = verdict::failure_check_of(run_spec->evaluation); !check) return check.error();
  if (auto served = pools.can_serve(run_spec->evaluation.backend); !served) return served.error();

  auto source = ContentStore::open(*graph_dir / store_dir_name, false);
  if (!source) return source.error();
  JobSpec spec{std::move(*run_spec), new_store_prefix()};
  auto lock = store.lock_shared();
  if (!lock) return lock.error();
  run::RunPlace place{store, spec.store_prefix, {}, {}, {}};
  if (auto imported = run::import_original(*document, *source, place); !imported)
    return imported.error().with_context("importing " + graph_dir->string());
  return jobs.submit(NewJob{encode(spec).dump(), encode_graph_document(*document).dump(), graph_dir->string(),
                            static_cast<int>(request.priority), submitter_uid});
}

// The outputs of a finished job in output.out_dir, as `minify run` writes them, with the result's blobs.
Expected<protocol::ResultReply> export_result(const JobRecord& job, const ContentStore& store,
                                             const run::OutputPlace& output, std::chrono::milliseconds keep) {
  const std::filesystem::path& out = output.out_dir;
  std::string id = std::to_string(job.summary.id);
  if (job.summary.state != JobState::done) {
    std::string state = to_string(job.summary.state);
    if (job.summary.state == JobState::failed) return make_error(ErrorKind::not_found, "job " + id + " failed: " + job.summary.error);
    return make_error(ErrorKind::not_found, "job " + id + " is " + state + ": no result yet");
  }
  if (result_expired(job.summary, keep, unix_now()))
    return make_error(ErrorKind::not_found, "job " + id + "'s result expired: it ended more than minifyd's --keep-results ago, and its graphs were dropped from the store");
  if (!job.checkpoint_json || !job.result_json) return make_error(ErrorKind::corrupt, "job " + id + " is done but has no result");
  nlohmann::json checkpoint_json = nlohmann::json::parse(*job.checkpoint_json, nullptr, false);
  if (checkpoint_json.is_discarded())
    return make_error(ErrorKind::corrupt, "job " + id + ": its checkpoint in the job store is not JSON");
  auto checkpoint = run::decode_checkpoint(checkpoint_json);
  if (!checkpoint) return checkpoint.error().with_context("job " + id);
  auto result = decode_job_result(*job.result_json);
  if (!result) return result.error().with_context("job " + id);

  std::error_code error;
  std::filesystem::create_directories(out, error);
  if (error) return make_error(ErrorKind::io, "creating " + out.string() + ": " + error.message());
  // One writer per directory: a `minify run` or another result writing there is refused, named.
  auto owner = OwnerLock::acquire(out);
  if (!owner) return owner.error();
  auto target = ContentStore::open(out / store_dir_name, true);
  if (!target) return target.error();
  run::RunPlace place{*target, "result", {}, {}, {}};
  if (auto copied = run::import_original(checkpoint->state.document, store, place); !copied)
    return copied.error().with_context("copying the result's blobs");
  if (auto written = run::write_outputs(*checkpoint, result->report, output); !written) return written.error();
  if (job.analysis_json) {
    auto analysis = analysis::decode_analysis_files(*job.analysis_json);
    if (!analysis) return analysis.error().with_context("job " + id);
    if (auto written = analysis::write_rendered_analysis(out, *analysis); !written) return written.error();
  }
  return protocol::ResultReply{std::move(result->summary), out.string()};
}

struct PreparedQuery {
  verdict::EvaluationSpec spec;
  verdict::FailureCheck check;
  protocol::WorkerRequest request;
};

// The evaluate request for the graph in `graph_dir`, which the worker reads from its store in place.
Expected<PreparedQuery> prepare_query(const nlohmann::json& evaluation, const std::filesystem::path& graph_dir,
                                      ProgramPools& pools) {
  auto graph = read_submitted_graph(graph_dir);
  if (!graph) return graph.error();
  auto spec = protocol::decode_message<verdict::EvaluationSpec>(JsonView(evaluation, "evaluation"));
  if (!spec) return spec.error().with_context("the query of " + graph_dir.string());
  auto document = graph->decode(spec->operators());
  if (!document) return document.error();
  if (auto served = pools.can_serve(spec->backend); !served) return served.error();
  auto check = verdict::failure_check_of(*spec);
  if (!check) return check.error();
  protocol::WorkerRequest worker_request = verdict::evaluate_request(*spec, *document, graph_dir / store_dir_name);
  return PreparedQuery{std::move(*spec), std::move(*check), std::move(worker_request)};
}


}  // namespace

void Daemon::on_request(const Connection& connection, transport::DecodedRequest request) {
  nlohmann::json tag = protocol::request_tag(request.json);
  auto typed = protocol::decode_typed_request(request);
  if (!typed) return reply_error(connection, tag, typed.error());
  bool adds_work = std::holds_alternative<protocol::SubmitRequest>(*typed) ||
                   std::holds_alternative<protocol::QueryRequest>(*typed);
  if (stopping_ && adds_work)
    return reply_error(connection, tag, make_error(ErrorKind::unsupported, "the daemon is shutting down"));
  std::visit([&](auto& typed_request) { handle(connection, tag, std::move(typed_request)); }, *typed);
}

void Daemon::on_closed(transport::ClientConnection& connection) {
  for (auto it = watchers_.begin(); it != watchers_.end();) {
    auto& list = it->second;
    list.erase(std::remove_if(list.begin(), list.end(),
                              [&](const std::weak_ptr<transport::ClientConnection>& weak) {
                                auto locked = weak.lock();
                                return !locked || locked.get() == &connection;
                              }),
               list.end());
    it = list.empty() ? watchers_.erase(it) : std::next(it);
  }
}

void Daemon::reply_error(const Connection& connection, const nlohmann::json& tag, const Error& error) {
  connection->send(protocol::error_reply(error, tag));
}

protocol::JobInfo Daemon::describe(const JobSummary& job) const {
  protocol::JobInfo info;
  info.id = job.id;
  info.state = to_string(job.state);
  info.priority = job.priority;
  info.graph = job.graph_name;
  info.submitted_at = job.submitted_at;
  info.started_at = job.started_at;
  info.finished_at = job.finished_at;
  info.sessions = job.sessions;
  if (!job.error.empty()) info.error = job.error;
  info.cancel_requested = job.cancel_requested;
  info.submitter_uid = job.submitter_uid;
  if (auto live = progress_.find(job.id); live != progress_.end()) {
    info.progress = live->second;
  } else if (!job.progress_json.empty()) {
    auto saved = parse_json(job.progress_json);
    auto event = saved ? protocol::decode_message<protocol::JobEvent>(*saved) : Expected<protocol::JobEvent>(saved.error());
    if (event) info.progress = std::move(*event);
    else log::warn("job " + std::to_string(job.id) + ": its saved progress is unreadable: " + event.error().message);
  }
  return info;
}

void Daemon::handle(const Connection& connection, const nlohmann::json& tag, protocol::SubmitRequest request) {
  std::int64_t submitter_uid = connection->peer_uid();
  off_thread([this, request = std::move(request), submitter_uid] {
               return submit_job(request, submitter_uid, store_, *jobs_, pools_, config_);
             },
             [this, connection, tag](Expected<std::int64_t> id) {
               if (!id) {
                 reply_error(connection, tag, id.error().with_context("submit"));
               } else {
                 log::info("job " + std::to_string(*id) + ": queued");
                 reply_ok(connection, tag, protocol::SubmitReply{*id});
               }
               start_jobs();
             });
}

void Daemon::handle(const Connection& connection, const nlohmann::json& tag, protocol::StatusRequest request) {
  if (!request.job) return handle(connection, tag, protocol::ListRequest{});
  auto job = jobs_->summary(*request.job);
  if (!job) return reply_error(connection, tag, job.error());
  reply_ok(connection, tag, protocol::StatusReply{describe(*job), {}});
}

void Daemon::handle(const Connection& connection, const nlohmann::json& tag, protocol::ListRequest) {
  auto jobs = jobs_->list();
  if (!jobs) return reply_error(connection, tag, jobs.error());
  protocol::ListReply listed;
  for (const JobSummary& job : *jobs) listed.jobs.push_back(describe(job));
  reply_ok(connection, tag, listed);
}

void Daemon::handle(const Connection& connection, const nlohmann::json& tag, protocol::WatchRequest request) {
  auto job = jobs_->summary(request.job);
  if (!job) return reply_error(connection, tag, job.error());
  reply_ok(connection, tag, protocol::WatchReply{describe(*job)});
  if (is_final(job->state)) {
    protocol::EndEvent end;
    end.job = request.job;
    end.state = to_string(job->state);
    connection->send(protocol::encode(end));
    return;
  }
  connection->set_streaming(true);
  watchers_[request.job].push_back(connection);
}

void Daemon::handle(const Connection& connection, const nlohmann::json& tag, protocol::ResultRequest request) {
  auto out = absolute_dir(request.out, "out");
  if (!out) return reply_error(connection, tag, out.error());
  off_thread(
      [this, id = request.job, out = *out]() -> Expected<protocol::ResultReply> {
        auto job = jobs_->get(id);
        if (!job) return job.error();
        // repro.py of a torch.compile backend is written by the Python workers' interpreter.
        return export_result(*job, store_, run::OutputPlace{out, config_.minify_executable,
                                                             [this] { return pools_.python(); }},
                             config_.keep_results);
      },
      [this, connection, tag](Expected<protocol::ResultReply> exported) {
        if (!exported) return reply_error(connection, tag, exported.error());
        reply_ok(connection, tag, *exported);
      });
}

void Daemon::handle(const Connection& connection, const nlohmann::json& tag, protocol::CancelJobRequest request) {
  std::int64_t id = request.job;
  auto state = jobs_->request_cancel(id);
  if (!state) return reply_error(connection, tag, state.error());
  if (auto runner = runners_.find(id); runner != runners_.end()) runner->second->stop(StopCause::cancel);
  else if (*state == JobState::cancelled)
    on_job_event(id, protocol::EndEvent{id, to_string(*state), std::nullopt, std::nullopt, std::nullopt});
  reply_ok(connection, tag, protocol::CancelJobReply{id, to_string(*state)});
}

void Daemon::handle(const Connection& connection, const nlohmann::json& tag, protocol::QueryRequest request) {
  auto graph_dir = absolute_dir(request.graph_dir, "graph_dir");
  if (!graph_dir) return reply_error(connection, tag, graph_dir.error());
  off_thread([this, evaluation = std::move(request.evaluation), graph_dir = *graph_dir] {
               return prepare_query(evaluation, graph_dir, pools_);
             },
             [this, connection, tag](Expected<PreparedQuery> prepared) {
               if (!prepared) return reply_error(connection, tag, prepared.error());
               auto pool = pools_.pool_for(prepared->spec.backend);
               if (!pool) return reply_error(connection, tag, pool.error());
               (*pool)->scheduler.submit((*pool)->queries, prepared->request, prepared->spec.timeout,
                                         [this, connection, tag, check = prepared->check](pool::WorkerOutcome outcome) {
                                           auto result = verdict::query_result(outcome, check);
                                           if (!result) return reply_error(connection, tag, result.error());
                                           reply_ok(connection, tag, protocol::QueryReply{std::move(*result)});
                                         });
             });
}

void Daemon::handle(const Connection& connection, const nlohmann::json& tag, protocol::StatsRequest) {
  auto counts = jobs_->counts();
  if (!counts) return reply_error(connection, tag, counts.error());
  protocol::StatsReply stats;
  // The pools' figures together: minify-worker's and, once started, the Python worker's.
  for (const ProgramPool* program : pools_.started()) {
    const pool::PoolStats& pool = program->pool.stats();
    stats.pool.requests += pool.requests;
    stats.pool.workers_started += pool.workers_started;
    stats.pool.crashes_contained += pool.crashes_contained;
    stats.pool.timeouts += pool.timeouts;
    stats.pool.protocol_errors += pool.protocol_errors;
    stats.pool.cancelled += pool.cancelled;
    stats.pool.slots += program->pool.capacity();
    stats.queue.waiting += program->scheduler.waiting();
    stats.queue.running += program->scheduler.running();
    for (const protocol::WorkerHello& hello : program->pool.hellos()) stats.pool.workers.push_back(hello);
  }
  stats.jobs = {counts->queued, counts->running, counts->done, counts->failed, counts->cancelled};
  for (const auto& [id, progress] : progress_) {
    stats.running_jobs.queries += progress.queries;
    stats.running_jobs.cache_hits += progress.cache_hits;
  }
  transport::ServerStats connections = server_->stats();
  stats.connections = {connections.open,     connections.accepted,  connections.refused,
                       connections.requests, connections.malformed, connections.dropped};
  stats.max_running_jobs = config_.max_running_jobs;
  auto hosts = jobs_->hosts();
  if (!hosts) return reply_error(connection, tag, hosts.error());
  for (const HostRecord& host : *hosts)
    stats.hosts.push_back({host.name, host.workers, host.gpus, host.running_jobs, host.started_at, host.heartbeat_at});
  reply_ok(connection, tag, stats);
}

void Daemon::handle(const Connection& connection, const nlohmann::json& tag, protocol::DaemonShutdownRequest) {
  reply_ok(connection, tag, protocol::DaemonShutdownReply{runners_.size()});
  begin_shutdown("a shutdown request");
}

}  // namespace minifyd::service
