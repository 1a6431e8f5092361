// The daemon's requests (docs/daemon.md has the protocol). Anything that touches files beyond the
// job store runs off the io thread.
#include <boost/asio/post.hpp>

#include "common/graph_codec.h"
#include "common/json_view.h"
#include "common/log.h"
#include "daemon/query/evaluation_spec.h"
#include "daemon/query/failure_check.h"
#include "daemon/query/query_result.h"
#include "daemon/run/output_writer.h"
#include "daemon/search/strategy_registry.h"
#include "daemon/service/daemon.h"
#include "daemon/service/job_spec.h"
#include "protocol/daemon_messages.h"

namespace minifyd::service {
namespace {

using Connection = std::shared_ptr<transport::ClientConnection>;

Expected<std::int64_t> job_id_of(const nlohmann::json& request) {
  std::int64_t id = 0;
  if (auto read = JsonView(request).read("job", id); !read) return read.error();
  return id;
}

Expected<std::filesystem::path> absolute_dir_of(const nlohmann::json& request, const char* key) {
  std::string text;
  if (auto read = JsonView(request).read(key, text); !read) return read.error();
  std::filesystem::path path(text);
  if (!path.is_absolute()) return make_error(ErrorKind::invalid_input, std::string(key) + ": '" + text + "' is not an absolute path");
  return path.lexically_normal();
}

// The submitted graph, validated, and the job's spec; then its blobs in the shared store and the job
// in the job store, in that order (a job never exists without its blobs).
Expected<std::int64_t> submit_job(const nlohmann::json& request, const ContentStore& store, JobStore& jobs,
                                  ProgramPools& pools) {
  auto graph_dir = absolute_dir_of(request, "graph_dir");
  if (!graph_dir) return graph_dir.error();
  auto document = load_graph_dir(*graph_dir);
  if (!document) return document.error();
  JsonView view(request);
  auto spec_field = view.field("spec");
  if (!spec_field) return spec_field.error();
  // The spec names the graph it was made for; the job's is the one submitted.
  nlohmann::json spec_json = spec_field->raw();
  if (spec_json.is_object()) spec_json["graph_dir"] = graph_dir->string();
  auto run_spec = run::decode_run_spec(JsonView(spec_json, "spec"));
  if (!run_spec) return run_spec.error();
  if (auto strategies = search::select_strategies(run_spec->strategies); !strategies) return strategies.error();
  if (auto served = pools.can_serve(run_spec->evaluation.backend); !served) return served.error();
  if (run_spec->evaluation.cpu_limit_seconds || run_spec->evaluation.memory_limit_mb)
    return make_error(ErrorKind::invalid_input,
                      "--cpu-limit and --memory-limit are the daemon's: every job's workers run under minifyd's limits");
  std::int64_t priority = 0;
  if (auto read = view.read_optional("priority", priority); !read) return read.error();

  auto source = ContentStore::open(*graph_dir / store_dir_name, false);
  if (!source) return source.error();
  JobSpec spec{std::move(*run_spec), new_store_prefix()};
  run::RunPlace place{store, spec.store_prefix, {}};
  if (auto imported = run::import_original(*document, *source, place); !imported)
    return imported.error().with_context("importing " + graph_dir->string());
  return jobs.submit(NewJob{encode(spec).dump(), encode_graph_document(*document).dump(), graph_dir->string(),
                            static_cast<int>(priority)});
}

// The outputs of a finished job in output.out_dir, as `minify run` writes them, with the result's blobs.
Expected<nlohmann::json> export_result(const JobRecord& job, const ContentStore& store, const run::OutputPlace& output) {
  const std::filesystem::path& out = output.out_dir;
  std::string id = std::to_string(job.summary.id);
  if (job.summary.state != JobState::done) {
    std::string state = to_string(job.summary.state);
    if (job.summary.state == JobState::failed) return make_error(ErrorKind::not_found, "job " + id + " failed: " + job.summary.error);
    return make_error(ErrorKind::not_found, "job " + id + " is " + state + ": no result yet");
  }
  if (!job.checkpoint_json || !job.result_json) return make_error(ErrorKind::corrupt, "job " + id + " is done but has no result");
  nlohmann::json checkpoint_json = nlohmann::json::parse(*job.checkpoint_json, nullptr, false);
  nlohmann::json result = nlohmann::json::parse(*job.result_json, nullptr, false);
  if (checkpoint_json.is_discarded() || result.is_discarded())
    return make_error(ErrorKind::corrupt, "job " + id + ": its result in the job store is not JSON");
  auto checkpoint = run::decode_checkpoint(checkpoint_json);
  if (!checkpoint) return checkpoint.error().with_context("job " + id);

  std::error_code error;
  std::filesystem::create_directories(out, error);
  if (error) return make_error(ErrorKind::io, "creating " + out.string() + ": " + error.message());
  auto target = ContentStore::open(out / store_dir_name, true);
  if (!target) return target.error();
  run::RunPlace place{*target, "result", {}};
  if (auto copied = run::import_original(checkpoint->state.document, store, place); !copied)
    return copied.error().with_context("copying the result's blobs");
  if (auto written = run::write_outputs(*checkpoint, result.value("report", std::string()), output); !written)
    return written.error();
  result.erase("report");
  result["out"] = out.string();
  return result;
}

struct PreparedQuery {
  EvaluationSpec spec;
  FailureCheck check;
  protocol::WorkerRequest request;
};

// The evaluate request for the graph in `graph_dir`, which the worker reads from its store in place.
Expected<PreparedQuery> prepare_query(const nlohmann::json& request, const std::filesystem::path& graph_dir,
                                      ProgramPools& pools) {
  auto document = load_graph_dir(graph_dir);
  if (!document) return document.error();
  auto evaluation = JsonView(request).field("evaluation");
  if (!evaluation) return evaluation.error();
  auto spec = decode_evaluation_spec(*evaluation);
  if (!spec) return spec.error();
  if (auto served = pools.can_serve(spec->backend); !served) return served.error();
  auto check = failure_check_of(*spec);
  if (!check) return check.error();
  protocol::WorkerRequest worker_request = evaluate_request(*spec, *document, graph_dir / store_dir_name);
  return PreparedQuery{std::move(*spec), std::move(*check), std::move(worker_request)};
}


}  // namespace

void Daemon::on_request(const Connection& connection, transport::DecodedRequest request) {
  const std::string& type = request.type;
  const nlohmann::json& body = request.json;
  if (stopping_ && (type == "submit" || type == "query"))
    return reply(connection, body, protocol::error_reply(make_error(ErrorKind::unsupported, "the daemon is shutting down")));
  if (type == "submit") return submit(connection, body);
  if (type == "status") return status(connection, body);
  if (type == "list") return list(connection, body);
  if (type == "watch") return watch(connection, body);
  if (type == "result") return result(connection, body);
  if (type == "cancel") return cancel(connection, body);
  if (type == "query") return query(connection, body);
  if (type == "stats") return stats(connection, body);
  if (type == "shutdown") return shutdown(connection, body);
  reply(connection, body, protocol::error_reply(make_error(ErrorKind::invalid_input, "unknown request type \"" + type + "\"")));
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

void Daemon::reply(const Connection& connection, const nlohmann::json& request, nlohmann::json reply) {
  if (request.contains("tag")) reply["tag"] = request["tag"];
  connection->send(reply);
}

void Daemon::off_thread(std::function<nlohmann::json()> work, std::function<void(nlohmann::json)> done) {
  boost::asio::post(blocking_, [this, work = std::move(work), done = std::move(done)] {
    nlohmann::json answer = work();
    boost::asio::post(io_, [done, answer = std::move(answer)] { done(answer); });
  });
}

nlohmann::json Daemon::describe(const JobSummary& job) const {
  nlohmann::json json{{"id", job.id},
                      {"state", to_string(job.state)},
                      {"priority", job.priority},
                      {"graph", job.graph_name},
                      {"submitted_at", job.submitted_at},
                      {"sessions", job.sessions}};
  if (job.started_at) json["started_at"] = *job.started_at;
  if (job.finished_at) json["finished_at"] = *job.finished_at;
  if (!job.error.empty()) json["error"] = job.error;
  if (job.cancel_requested) json["cancel_requested"] = true;
  if (auto live = progress_.find(job.id); live != progress_.end()) json["progress"] = live->second;
  else if (!job.progress_json.empty()) json["progress"] = nlohmann::json::parse(job.progress_json, nullptr, false);
  return json;
}

void Daemon::submit(const Connection& connection, const nlohmann::json& request) {
  off_thread(
      [this, request] {
        auto id = submit_job(request, store_, jobs_, pools_);
        if (!id) return protocol::error_reply(id.error().with_context("submit"));
        return nlohmann::json{{"ok", true}, {"id", *id}};
      },
      [this, connection, request](nlohmann::json answer) {
        if (answer.value("ok", false)) log::info("job " + std::to_string(answer["id"].get<std::int64_t>()) + ": queued");
        reply(connection, request, std::move(answer));
        start_jobs();
      });
}

void Daemon::status(const Connection& connection, const nlohmann::json& request) {
  if (!request.contains("job")) return list(connection, request);
  auto id = job_id_of(request);
  if (!id) return reply(connection, request, protocol::error_reply(id.error()));
  auto job = jobs_.summary(*id);
  if (!job) return reply(connection, request, protocol::error_reply(job.error()));
  reply(connection, request, nlohmann::json{{"ok", true}, {"job", describe(*job)}});
}

void Daemon::list(const Connection& connection, const nlohmann::json& request) {
  auto jobs = jobs_.list();
  if (!jobs) return reply(connection, request, protocol::error_reply(jobs.error()));
  nlohmann::json listed = nlohmann::json::array();
  for (const JobSummary& job : *jobs) listed.push_back(describe(job));
  reply(connection, request, nlohmann::json{{"ok", true}, {"jobs", std::move(listed)}});
}

void Daemon::watch(const Connection& connection, const nlohmann::json& request) {
  auto id = job_id_of(request);
  if (!id) return reply(connection, request, protocol::error_reply(id.error()));
  auto job = jobs_.summary(*id);
  if (!job) return reply(connection, request, protocol::error_reply(job.error()));
  reply(connection, request, nlohmann::json{{"ok", true}, {"job", describe(*job)}});
  if (is_final(job->state)) {
    connection->send(nlohmann::json{{"event", "end"}, {"job", *id}, {"state", to_string(job->state)}});
    return;
  }
  connection->set_streaming(true);
  watchers_[*id].push_back(connection);
}

void Daemon::result(const Connection& connection, const nlohmann::json& request) {
  auto id = job_id_of(request);
  if (!id) return reply(connection, request, protocol::error_reply(id.error()));
  auto out = absolute_dir_of(request, "out");
  if (!out) return reply(connection, request, protocol::error_reply(out.error()));
  off_thread(
      [this, id = *id, out = *out] {
        auto job = jobs_.get(id);
        if (!job) return protocol::error_reply(job.error());
        // repro.py of a torch.compile backend is written by the Python workers' interpreter.
        auto exported = export_result(*job, store_, run::OutputPlace{out, config_.minify_executable,
                                                                      [this] { return pools_.python(); }});
        if (!exported) return protocol::error_reply(exported.error());
        nlohmann::json answer = std::move(*exported);
        answer["ok"] = true;
        return answer;
      },
      [this, connection, request](nlohmann::json answer) { reply(connection, request, std::move(answer)); });
}

void Daemon::cancel(const Connection& connection, const nlohmann::json& request) {
  auto id = job_id_of(request);
  if (!id) return reply(connection, request, protocol::error_reply(id.error()));
  auto state = jobs_.request_cancel(*id);
  if (!state) return reply(connection, request, protocol::error_reply(state.error()));
  if (auto runner = runners_.find(*id); runner != runners_.end()) runner->second->stop(StopCause::cancel);
  else if (*state == JobState::cancelled)
    on_job_event(*id, nlohmann::json{{"event", "end"}, {"job", *id}, {"state", to_string(*state)}});
  reply(connection, request, nlohmann::json{{"ok", true}, {"job", *id}, {"state", to_string(*state)}});
}

void Daemon::query(const Connection& connection, const nlohmann::json& request) {
  auto graph_dir = absolute_dir_of(request, "graph_dir");
  if (!graph_dir) return reply(connection, request, protocol::error_reply(graph_dir.error()));
  boost::asio::post(blocking_, [this, connection, request, graph_dir = *graph_dir] {
    auto prepared = prepare_query(request, graph_dir, pools_);
    boost::asio::post(io_, [this, connection, request, prepared = std::move(prepared)] {
      if (!prepared) return reply(connection, request, protocol::error_reply(prepared.error()));
      auto pool = pools_.pool_for(prepared->spec.backend);
      if (!pool) return reply(connection, request, protocol::error_reply(pool.error()));
      (*pool)->scheduler.submit((*pool)->queries, prepared->request, prepared->spec.timeout,
                        [this, connection, request, check = prepared->check](WorkerOutcome outcome) {
                          auto result = query_result(outcome, check);
                          if (!result) return reply(connection, request, protocol::error_reply(result.error()));
                          reply(connection, request, nlohmann::json{{"ok", true}, {"result", std::move(*result)}});
                        });
    });
  });
}

void Daemon::stats(const Connection& connection, const nlohmann::json& request) {
  // The pools' figures together: minify-worker's and, once started, the Python worker's.
  PoolStats pool;
  std::size_t slots = 0, waiting = 0, running = 0;
  nlohmann::json workers = nlohmann::json::array();
  for (const ProgramPool* program : pools_.started()) {
    const PoolStats& stats = program->pool.stats();
    pool.requests += stats.requests;
    pool.workers_started += stats.workers_started;
    pool.crashes_contained += stats.crashes_contained;
    pool.timeouts += stats.timeouts;
    pool.protocol_errors += stats.protocol_errors;
    pool.cancelled += stats.cancelled;
    slots += program->pool.capacity();
    waiting += program->scheduler.waiting();
    running += program->scheduler.running();
    for (const protocol::WorkerHello& hello : program->pool.hellos()) workers.push_back(protocol::encode(hello));
  }
  transport::ServerStats connections = server_->stats();
  nlohmann::json jobs = nlohmann::json::object();
  if (auto counts = jobs_.counts(); counts)
    jobs = {{"queued", counts->queued}, {"running", counts->running}, {"done", counts->done},
            {"failed", counts->failed}, {"cancelled", counts->cancelled}};
  std::uint64_t cache_hits = 0, queries = 0;
  for (const auto& [id, progress] : progress_) {
    cache_hits += progress.value("cache_hits", std::uint64_t{0});
    queries += progress.value("queries", std::uint64_t{0});
  }
  reply(connection, request,
        nlohmann::json{{"ok", true},
                       {"pool", {{"slots", slots},
                                 {"requests", pool.requests},
                                 {"workers_started", pool.workers_started},
                                 {"crashes_contained", pool.crashes_contained},
                                 {"timeouts", pool.timeouts},
                                 {"protocol_errors", pool.protocol_errors},
                                 {"cancelled", pool.cancelled},
                                 {"workers", std::move(workers)}}},
                       {"queue", {{"waiting", waiting}, {"running", running}}},
                       {"jobs", std::move(jobs)},
                       {"running_jobs", {{"queries", queries}, {"cache_hits", cache_hits}}},
                       {"connections", {{"open", connections.open},
                                        {"accepted", connections.accepted},
                                        {"refused", connections.refused},
                                        {"requests", connections.requests},
                                        {"malformed", connections.malformed},
                                        {"dropped", connections.dropped}}},
                       {"max_running_jobs", config_.max_running_jobs}});
}

void Daemon::shutdown(const Connection& connection, const nlohmann::json& request) {
  reply(connection, request, nlohmann::json{{"ok", true}, {"running_jobs", runners_.size()}});
  begin_shutdown("a shutdown request");
}

}  // namespace minifyd::service
