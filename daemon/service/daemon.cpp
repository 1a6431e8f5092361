// The daemon's lifecycle and its jobs.
#include "daemon/service/daemon.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <map>
#include <set>

#include <boost/asio/post.hpp>

#include "common/json_view.h"
#include "common/log.h"
#include "daemon/service/job_spec.h"
#include "daemon/service/postgres_job_store.h"
#include "daemon/service/result_retention.h"
#include "daemon/service/sqlite_job_store.h"

namespace minifyd::service {
namespace {

// How often a running job's progress is written to the job store (status reads it from memory
// while the daemon runs; the store keeps it for listings after a restart).
constexpr std::chrono::seconds progress_save_interval{2};

// How often a shared queue is asked for jobs (its daemons submit to it, and free jobs when their
// leases run out) and the renewals' time is looked at.
constexpr std::chrono::milliseconds heartbeat_tick{1000};

// Roots of job prefixes no job names, left by a submit that died between importing its graph and
// recording the job, and a done job's roots but its result's, left by a session that lost its claim
// (a shared queue's daemon stopped past its lease) and wrote on. Their blobs go with the next gc.
// Under the store's exclusive lock, which a submit holds shared from its graph's import to its job's
// record: a store shared by the daemons of one queue never loses another daemon's submit in flight.
// While another daemon writes, the sweep waits for the next start (nullopt): a daemon stopped or cut
// off while it holds the lock must not keep this one from starting.
Expected<std::optional<std::size_t>> sweep_leftover_roots(const ContentStore& store, JobStore& jobs) {
  auto lock = store.try_lock_exclusive();
  if (!lock) return lock.error();
  if (!*lock) return std::optional<std::size_t>();
  auto listed = jobs.list();
  if (!listed) return listed.error();
  std::map<std::string, JobState> known;  // by store prefix
  for (const JobSummary& job : *listed) {
    auto record = jobs.get(job.id);
    if (!record) return record.error();
    auto spec = decode_job_spec(record->spec_json);
    if (!spec) return spec.error().with_context("job " + std::to_string(job.id));
    known[spec->store_prefix] = job.state;
  }
  auto roots = store.root_names();
  if (!roots) return roots.error();
  std::size_t removed = 0;
  for (const std::string& root : *roots) {
    auto parsed = parse_job_root(root);
    if (!parsed) continue;
    auto job = known.find(parsed->prefix);
    bool orphan = job == known.end();
    bool leftover = !orphan && job->second == JobState::done && parsed->kind != "result";
    if (!orphan && !leftover) continue;
    if (auto gone = store.remove_root(root); !gone) return gone.error();
    ++removed;
  }
  return std::optional<std::size_t>(removed);
}

// The job store the configuration names: a shared queue's PostgreSQL, or the state directory's SQLite.
// The job store the configuration names: a shared queue's PostgreSQL, or the state directory's SQLite;
// and the content store's directory: the one the shared queue names (recording `store_dir` if it
// names none yet), else `store_dir`, by default STATE_DIR/store.
Expected<std::unique_ptr<JobStore>> open_job_store(DaemonConfig& config) {
  if (config.queue.empty()) {
    if (config.store_dir.empty()) config.store_dir = config.state_dir / "store";
    auto opened = SqliteJobStore::open(config.state_dir / job_database_name);
    if (!opened) return opened.error();
    return std::unique_ptr<JobStore>(std::move(*opened));
  }
  if (!is_postgres_url(config.queue))
    return make_error(ErrorKind::invalid_input, "--queue: not a postgresql:// URL");
  auto opened = PostgresJobStore::open(config.queue, config.name, config.lease);
  if (!opened) return opened.error();
  auto store_dir = (*opened)->shared_store(config.store_dir.string());
  if (!store_dir) return store_dir.error();
  config.store_dir = *store_dir;
  return std::unique_ptr<JobStore>(std::move(*opened));
}

}  // namespace

Expected<std::unique_ptr<Daemon>> Daemon::open(DaemonConfig config) {
  std::error_code error;
  std::filesystem::create_directories(config.state_dir, error);
  if (error) return make_error(ErrorKind::io, "creating the state directory " + config.state_dir.string() + ": " + error.message());
  // Only its owner may read the state (graphs, tensors) or reach the socket inside it.
  ::chmod(config.state_dir.c_str(), 0700);
  auto jobs = open_job_store(config);
  if (!jobs) return jobs.error();
  auto store = ContentStore::open(config.store_dir, true);
  if (!store) return store.error();
  // On a full disk the daemon starts all the same: status, list and results are reads.
  auto requeued = (*jobs)->requeue_interrupted();
  bool requeue_pending = !requeued && requeued.error().kind == ErrorKind::no_space;
  if (!requeued && !requeue_pending) return requeued.error();
  if (requeue_pending)
    log::warn(requeued.error().message + ": the jobs a previous daemon left running resume once there is room");
  else if (*requeued > 0)
    log::info("resuming " + std::to_string(*requeued) + " job(s) a previous daemon left running");
  auto listed = (*jobs)->list();
  if (!listed) return listed.error();
  for (const JobSummary& job : *listed)
    if (job.cancel_requested && job.state == JobState::queued)
      if (auto cancelled = (*jobs)->request_cancel(job.id); !cancelled) return cancelled.error();
  auto swept = sweep_leftover_roots(*store, **jobs);
  if (!swept) return swept.error().with_context("sweeping the store");
  if (!*swept) log::info("the store's sweep waits for the next start: another daemon is writing to it");

  std::unique_ptr<Daemon> daemon(new Daemon(std::move(config), std::move(*store), std::move(*jobs)));
  daemon->requeue_pending_ = requeue_pending;
  daemon->gc_pending_ = *swept && **swept > 0;
  if (auto listening = daemon->server_->listen(); !listening) return listening.error();
  return daemon;
}

Daemon::Daemon(DaemonConfig config, ContentStore store, std::unique_ptr<JobStore> jobs)
    : config_(std::move(config)),
      store_(std::move(store)),
      jobs_(std::move(jobs)),
      pools_(io_, config_.pool, config_.native_worker_missing, config_.python),
      server_(std::make_unique<transport::SocketServer>(io_, config_.socket_path, *this, transport::ServerLimits{})),
      signals_(io_, SIGTERM, SIGINT),
      room_timer_(io_),
      heartbeat_timer_(io_),
      queue_changes_socket_(io_) {}

Daemon::~Daemon() { blocking_.join(); }

void Daemon::serve() {
  pools_.start();
  signals_.async_wait([this](const boost::system::error_code& error, int signal) {
    if (!error) begin_shutdown(signal == SIGTERM ? "SIGTERM" : "SIGINT");
  });
  log::info("minifyd serving " + config_.socket_path.string() + " with " + std::to_string(config_.pool.slots.size()) +
            " worker(s), at most " + std::to_string(config_.max_running_jobs) + " running job(s)");
  if (requeue_pending_) start_jobs_when_room();
  else start_jobs();
  if (!config_.queue.empty()) listen_to_queue();
  renewed_at_ = next_renewal_ = std::chrono::steady_clock::now();
  started_at_ = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  renew_claims();  // the first heartbeat: stats shows the daemon from its start
  schedule_heartbeat();
  io_.run();
  log::info("minifyd stopped");
}

void Daemon::start_jobs() {
  while (!stopping_ && runners_.size() < config_.max_running_jobs) {
    std::vector<std::int64_t> running_here;
    for (const auto& [id, runner] : runners_) running_here.push_back(id);
    auto claimed = jobs_->claim_next(running_here);
    if (!claimed) {
      log::error("claiming the next job: " + claimed.error().message);
      if (claimed.error().kind == ErrorKind::no_space) start_jobs_when_room();
      return;
    }
    if (!*claimed) return;
    std::int64_t id = (*claimed)->summary.id;
    auto spec = decode_job_spec((*claimed)->spec_json);
    auto pool = spec ? pools_.pool_for(spec->run.evaluation.backend) : Expected<ProgramPool*>(spec.error());
    if (!pool) {
      fail_unstarted_job((*claimed)->claim(), pool.error().message);
      continue;
    }
    log::info("job " + std::to_string(id) + ": running (session " + std::to_string((*claimed)->summary.sessions) + ")");
    JobContext context{*jobs_, store_, io_, (*pool)->scheduler, (*pool)->pool.capacity(), [this] { return pools_.python(); }};
    runners_[id] = std::make_unique<JobThread>(context, std::move(**claimed),
                                               [this](std::int64_t job, protocol::JobEvent event) {
                                                 on_job_event(job, std::move(event));
                                               });
  }
}

void Daemon::start_jobs_when_room() {
  room_timer_.expires_after(std::chrono::seconds(2));
  room_timer_.async_wait([this](const boost::system::error_code& error) {
    if (error || stopping_) return;
    if (requeue_pending_) {
      auto requeued = jobs_->requeue_interrupted();
      if (!requeued) return start_jobs_when_room();
      requeue_pending_ = false;
      log::info("room again: resuming " + std::to_string(*requeued) + " job(s) a previous daemon left running");
    }
    start_jobs();
  });
}

void Daemon::fail_unstarted_job(const JobClaim& claim, const std::string& message) {
  log::warn("job " + std::to_string(claim.id) + " failed: " + message);
  if (auto recorded = jobs_->finish(claim, JobState::failed, message); !recorded) log::error(recorded.error().message);
  on_job_event(claim.id, protocol::EndEvent{claim.id, to_string(JobState::failed), message, std::nullopt, std::nullopt});
}

void Daemon::on_job_event(std::int64_t id, protocol::JobEvent event) {
  const auto* ended = std::get_if<protocol::EndEvent>(&event);
  if (auto watchers = watchers_.find(id); watchers != watchers_.end()) {
    nlohmann::json message = protocol::encode(event);
    auto& list = watchers->second;
    for (auto& weak : list)
      if (auto connection = weak.lock()) {
        connection->send(message);
        // The stream is over: the connection idles out like any other if its client stays.
        if (ended) connection->set_streaming(false);
      }
    if (ended) watchers_.erase(watchers);
  }
  auto runner = runners_.find(id);  // none for a job that failed before its run started
  if (!ended) {
    auto now = std::chrono::steady_clock::now();
    auto& saved = progress_saved_[id];
    if (now - saved >= progress_save_interval && runner != runners_.end() && !runner->second->lost()) {
      saved = now;
      if (auto written = jobs_->save_progress(runner->second->claim(), protocol::encode(event).dump()); !written)
        log::warn(written.error().message);
    }
    progress_[id] = std::get<protocol::ProgressEvent>(std::move(event));
    return;
  }
  log::info("job " + std::to_string(id) + ": " + ended->state);
  // Listings of a finished job show where it ended: its result's figures, else its last progress.
  std::optional<protocol::JobEvent> last;
  if (ended->summary) last = event;
  else if (auto progress = progress_.find(id); progress != progress_.end()) last = progress->second;
  if (last && runner != runners_.end() && !runner->second->lost())
    if (auto written = jobs_->save_progress(runner->second->claim(), protocol::encode(*last).dump()); !written)
      log::warn(written.error().message);
  progress_.erase(id);
  progress_saved_.erase(id);
  if (ended->state == to_string(JobState::done)) {
    gc_pending_ = true;
    collect_store();
  }
  // The runner's thread posted this as its last act; joining it here is immediate.
  runners_.erase(id);
  start_jobs();
  finish_shutdown_when_idle();
}

void Daemon::schedule_heartbeat() {
  heartbeat_timer_.expires_after(std::min<std::chrono::milliseconds>(heartbeat_tick, config_.lease / 3));
  heartbeat_timer_.async_wait([this](const boost::system::error_code& error) {
    if (error || stopping_) return;
    // Another daemon of a shared queue may have submitted, or freed a job whose lease ran out.
    if (!config_.queue.empty() && !requeue_pending_) start_jobs();
    if (!config_.queue.empty()) {
      follow_jobs_elsewhere();
      listen_to_queue();
    }
    collect_store();
    auto now = std::chrono::steady_clock::now();
    if (now >= next_expiry_) drop_expired_results();
    // Renewals that failed, or have not answered, for a whole lease: another daemon may hold any of
    // this one's jobs now, which stop without a write.
    if (!config_.queue.empty() && now - renewed_at_ >= config_.lease)
      for (auto& [id, runner] : runners_) runner->stop(StopCause::lease_lost);
    if (now >= next_renewal_) renew_claims();
    schedule_heartbeat();
  });
}

void Daemon::renew_claims() {
  if (renewing_) return;
  auto asked = std::chrono::steady_clock::now();
  next_renewal_ = asked + config_.lease / 3;
  std::vector<JobClaim> held;
  for (const auto& [id, runner] : runners_) held.push_back(runner->claim());
  renewing_ = true;
  // A database that does not answer (a network partition) must not hold up the socket's requests.
  off_thread(
      [this, held = std::move(held), host = host_record()]() -> Expected<Renewal> {
        if (auto beaten = jobs_->beat(host); !beaten) return beaten.error();
        return jobs_->renew(held);
      },
      [this, asked](Expected<Renewal> renewal) { on_renewal(renewal, asked); });
}

HostRecord Daemon::host_record() const {
  HostRecord host;
  host.name = config_.name;
  host.workers = config_.pool.slots.size();
  std::set<std::string> gpus;
  for (const pool::PoolSlot& slot : config_.pool.slots)
    if (slot.cuda_visible_devices && !slot.cuda_visible_devices->empty()) gpus.insert(*slot.cuda_visible_devices);
  for (const std::string& gpu : gpus) host.gpus += (host.gpus.empty() ? "" : ",") + gpu;
  host.running_jobs = runners_.size();
  host.started_at = started_at_;
  return host;
}

void Daemon::on_renewal(const Expected<Renewal>& renewal, std::chrono::steady_clock::time_point asked) {
  renewing_ = false;
  if (!renewal) return log::warn("renewing the running jobs' claims: " + renewal.error().message);
  renewed_at_ = asked;
  for (std::int64_t id : renewal->lost)
    if (auto runner = runners_.find(id); runner != runners_.end()) runner->second->stop(StopCause::lease_lost);
  for (std::int64_t id : renewal->cancel_requested)
    if (auto runner = runners_.find(id); runner != runners_.end()) runner->second->stop(StopCause::cancel);
}

void Daemon::collect_store() {
  if (!gc_pending_ || collecting_) return;
  collecting_ = true;
  off_thread([this] { return store_.gc_if_idle(); },
             [this](Expected<std::optional<GcReport>> collected) {
               collecting_ = false;
               if (!collected) return log::warn("collecting the store: " + collected.error().message);
               if (*collected) gc_pending_ = false;  // else a writer holds the store: the next tick tries again
             });
}

void Daemon::drop_expired_results() {
  if (expiring_) return;
  expiring_ = true;
  next_expiry_ = std::chrono::steady_clock::now() +
                 std::clamp<std::chrono::milliseconds>(config_.keep_results / 4, std::chrono::seconds(1),
                                                        std::chrono::minutes(10));
  off_thread([this] { return drop_expired_roots(store_, *jobs_, config_.keep_results, expired_); },
             [this](Expected<std::size_t> dropped) {
               expiring_ = false;
               if (!dropped) return log::warn("dropping expired results: " + dropped.error().message);
               if (*dropped == 0) return;
               log::info("dropped " + std::to_string(*dropped) + " root(s) of jobs whose results expired");
               gc_pending_ = true;
               collect_store();
             });
}

void Daemon::follow_jobs_elsewhere() {
  std::vector<std::int64_t> watched;
  for (const auto& [id, connections] : watchers_)
    if (runners_.count(id) == 0) watched.push_back(id);
  for (std::int64_t id : watched) {
    auto job = jobs_->summary(id);
    if (!job) continue;
    if (is_final(job->state)) {
      followed_progress_.erase(id);
      std::optional<std::string> error;
      if (job->state == JobState::failed) error = job->error;
      on_job_event(id, protocol::EndEvent{id, to_string(job->state), error, std::nullopt, std::nullopt});
      continue;
    }
    if (job->progress_json.empty() || followed_progress_[id] == job->progress_json) continue;
    followed_progress_[id] = job->progress_json;
    nlohmann::json json = nlohmann::json::parse(job->progress_json, nullptr, false);
    protocol::JobEvent event;
    if (!json.is_discarded() && protocol::decode(JsonView(json, "progress"), event) &&
        std::holds_alternative<protocol::ProgressEvent>(event))
      on_job_event(id, std::move(event));
  }
}

void Daemon::listen_to_queue() {
  if (queue_changes_) return;
  auto listening = jobs_->listen();
  if (!listening) return log::warn(listening.error().message + ": asking the queue every second until it answers");
  if (!*listening) return;
  int socket = ::dup((*listening)->socket());
  if (socket < 0) return log::warn("listening to the queue: dup: " + std::string(std::strerror(errno)));
  queue_changes_ = std::move(*listening);
  queue_changes_socket_.assign(socket);
  wait_for_queue_changes();
}

void Daemon::wait_for_queue_changes() {
  queue_changes_socket_.async_wait(boost::asio::posix::stream_descriptor::wait_read,
                                   [this](const boost::system::error_code& error) {
                                     if (error || stopping_) return;
                                     auto changes = queue_changes_->read();
                                     if (!changes) {
                                       log::warn(changes.error().message + ": listening again at the next tick");
                                       return stop_listening();
                                     }
                                     bool queued = false, watched = false;
                                     for (const JobChange& change : *changes) {
                                       queued = queued || change.state == JobState::queued;
                                       watched = watched || watchers_.count(change.id) != 0;
                                     }
                                     if (queued && !requeue_pending_) start_jobs();
                                     if (watched) follow_jobs_elsewhere();
                                     wait_for_queue_changes();
                                   });
}

void Daemon::stop_listening() {
  boost::system::error_code ignored;
  queue_changes_socket_.close(ignored);
  queue_changes_.reset();
}

void Daemon::begin_shutdown(const std::string& why) {
  if (stopping_) return;
  stopping_ = true;
  log::info("minifyd: stopping (" + why + "); " + std::to_string(runners_.size()) +
            " running job(s) checkpoint and resume at the next start");
  for (auto& [id, runner] : runners_) runner->stop(StopCause::shutdown);
  finish_shutdown_when_idle();
}

void Daemon::finish_shutdown_when_idle() {
  if (!stopping_ || !runners_.empty() || pool_stopped_) return;
  pool_stopped_ = true;
  signals_.cancel();
  room_timer_.cancel();
  heartbeat_timer_.cancel();
  stop_listening();
  pools_.stop([this] {
    server_->stop();
    io_.stop();
  });
}

}  // namespace minifyd::service
