// minifyd: the long-running coordinator. One io thread serves the socket, the shared worker pool
// and the scheduler; every running job searches on a thread of its own (job_thread.h) and blocking
// file work (importing a submitted graph, exporting a result) runs on a small thread pool, so that
// status and list are answered while the pool is saturated. State lives in the state directory:
// jobs.sqlite (the job store) and store/ (the content store every job shares); or, for a queue
// that the daemons of several hosts share (--queue), the jobs in PostgreSQL and the store in a
// directory every host mounts (--store), each daemon renewing the leases of the jobs it runs.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <nlohmann/json.hpp>

#include "common/content_store.h"
#include "common/expected.h"
#include "daemon/pool/worker_pool.h"
#include "daemon/service/job_thread.h"
#include "daemon/service/job_store.h"
#include "daemon/service/program_pools.h"
#include "daemon/transport/socket_server.h"
#include "protocol/daemon_requests.h"
#include "protocol/job_events.h"

namespace minifyd::service {

inline constexpr const char* job_database_name = "jobs.sqlite";

struct DaemonConfig {
  std::filesystem::path state_dir;
  std::filesystem::path socket_path;
  // Where the jobs are: empty for STATE_DIR/jobs.sqlite, or the PostgreSQL URL of a shared queue.
  std::string queue;
  // The content store (empty: a shared queue's, else STATE_DIR/store).
  std::filesystem::path store_dir;
  std::string name;  // this daemon's name in a shared queue, stable across its restarts
  // A shared queue's claims run out this long after their last renewal (renewed every third of it).
  std::chrono::milliseconds lease{30000};
  pool::PoolConfig pool;  // minify-worker and one slot per worker (per GPU and k with --gpus)
  // Why pool.worker.executable is empty: a build without LibTorch serves the torch.compile backends only.
  std::string native_worker_missing;
  std::string python;  // the Python worker's interpreter (--python; empty: found when first needed)
  std::size_t max_running_jobs = 2;
  // A submit finding this many jobs queued is refused: the queue is full; so is one whose user has
  // max_queued_jobs_per_user of them queued (through any daemon of a shared queue).
  std::size_t max_queued_jobs = 1000;
  std::size_t max_queued_jobs_per_user = 200;
  // A job done, failed or cancelled longer ago loses its roots in the store (result_retention.h).
  std::chrono::milliseconds keep_results{std::chrono::hours(24 * 7)};
  std::string minify_executable;  // written into repro.py for plugin backends
};

class Daemon final : public transport::RequestHandler {
 public:
  // Opens (or creates) the state directory, puts jobs a killed daemon left running back in the
  // queue, sweeps blobs of submits that died half-way, and binds the socket. Errors name the path.
  static Expected<std::unique_ptr<Daemon>> open(DaemonConfig config);
  ~Daemon() override;

  // Serves until a shutdown request, SIGTERM or SIGINT, then stops gracefully: running jobs stop
  // before their next query (their checkpoints stay, to resume at the next start), the pool stops.
  void serve();

  void on_request(const std::shared_ptr<transport::ClientConnection>& connection,
                  transport::DecodedRequest request) override;
  void on_closed(transport::ClientConnection& connection) override;

 private:
  explicit Daemon(DaemonConfig config, ContentStore store, std::unique_ptr<JobStore> jobs);

  // Requests (daemon_requests.cpp). Each replies on `connection`, at once or when its work is done,
  // echoing `tag` (null: none).
  using Connection = std::shared_ptr<transport::ClientConnection>;
  void handle(const Connection& connection, const nlohmann::json& tag, protocol::SubmitRequest request);
  void handle(const Connection& connection, const nlohmann::json& tag, protocol::StatusRequest request);
  void handle(const Connection& connection, const nlohmann::json& tag, protocol::ListRequest request);
  void handle(const Connection& connection, const nlohmann::json& tag, protocol::WatchRequest request);
  void handle(const Connection& connection, const nlohmann::json& tag, protocol::ResultRequest request);
  void handle(const Connection& connection, const nlohmann::json& tag, protocol::CancelJobRequest request);
  void handle(const Connection& connection, const nlohmann::json& tag, protocol::QueryRequest request);
  void handle(const Connection& connection, const nlohmann::json& tag, protocol::StatsRequest request);
  void handle(const Connection& connection, const nlohmann::json& tag, protocol::DaemonShutdownRequest request);

  // Sends an error reply, or an ok one with the encoded `body`.
  void reply_error(const Connection& connection, const nlohmann::json& tag, const Error& error);
  template <class Reply>
  void reply_ok(const Connection& connection, const nlohmann::json& tag, const Reply& body) {
    connection->send(protocol::ok_reply(protocol::encode(body), tag));
  }
  // Runs `work` (which returns an Expected) on the blocking pool and `done` with its result back on the
  // io thread. What the work throws (std::bad_alloc, where a file's size or a graph's asked for more
  // than there is) is its answer as an error: the daemon serves on.
  template <class Work, class Done>
  void off_thread(Work work, Done done) {
    boost::asio::post(blocking_, [this, work = std::move(work), done = std::move(done)]() mutable {
      auto answer = [&work]() -> decltype(work()) {
        try {
          return work();
        } catch (const std::exception& e) {
          return make_error(ErrorKind::io, std::string("the daemon's work for it failed: ") + e.what());
        }
      }();
      boost::asio::post(io_, [done = std::move(done), answer = std::move(answer)]() mutable { done(std::move(answer)); });
    });
  }
  protocol::JobInfo describe(const JobSummary& job) const;

  // Jobs (daemon.cpp).
  void start_jobs();
  // On a full disk, the jobs a previous daemon left running, and the queued ones, wait: tried again
  // every few seconds until the job store can be written.
  void start_jobs_when_room();
  // Records the end of a claimed job that could not start (no worker serves its backend).
  void fail_unstarted_job(const JobClaim& claim, const std::string& message);
  void on_job_event(std::int64_t id, protocol::JobEvent event);
  // Every tick: a shared queue's jobs are claimed (other daemons submit to it), and every third of
  // the lease the claims of the running jobs are renewed and this daemon's heartbeat recorded, off
  // the io thread.
  void schedule_heartbeat();
  void renew_claims();
  // Watches of jobs that another daemon of a shared queue runs: their progress and end as the queue
  // records them (progress every few seconds), read every tick.
  void follow_jobs_elsewhere();
  // A shared queue's changes (JobStore::listen): a job queued is claimed at once by a daemon with
  // room, a watched job's progress and end are forwarded as they are recorded. Listened to again at
  // a tick after the connection broke; the ticks' claims and follows go on meanwhile.
  void listen_to_queue();
  void wait_for_queue_changes();
  void stop_listening();
  // A job done drops its search's roots (keep_only_job_result): the blobs they kept go once no
  // writer holds the store, tried at once and then every tick, off the io thread.
  void collect_store();
  // Every few ticks (a quarter of --keep-results, between a second and ten minutes): the roots of the
  // jobs whose results expired are dropped, off the io thread, and the store collected.
  void drop_expired_results();
  void on_renewal(const Expected<Renewal>& renewal, std::chrono::steady_clock::time_point asked);
  // What this daemon's heartbeat records in a shared queue (JobStore::beat).
  HostRecord host_record() const;
  void begin_shutdown(const std::string& why);
  void finish_shutdown_when_idle();

  DaemonConfig config_;
  boost::asio::io_context io_;
  ContentStore store_;
  std::unique_ptr<JobStore> jobs_;
  ProgramPools pools_;
  std::unique_ptr<transport::SocketServer> server_;
  boost::asio::signal_set signals_;
  boost::asio::steady_timer room_timer_;
  boost::asio::steady_timer heartbeat_timer_;
  bool renewing_ = false;  // a renewal is in flight
  std::chrono::steady_clock::time_point renewed_at_;  // when the last renewal that succeeded was asked
  std::chrono::steady_clock::time_point next_renewal_;
  double started_at_ = 0;  // unix seconds
  std::unique_ptr<QueueChanges> queue_changes_;
  boost::asio::posix::stream_descriptor queue_changes_socket_;  // a dup() of queue_changes_'s socket
  bool gc_pending_ = false;
  bool collecting_ = false;
  bool expiring_ = false;  // a drop of expired results is in flight
  std::chrono::steady_clock::time_point next_expiry_;
  std::set<std::int64_t> expired_;  // the jobs whose roots this daemon dropped (read by the blocking pool)
  bool requeue_pending_ = false;  // the requeue of interrupted jobs at start found the disk full
  boost::asio::thread_pool blocking_{2};
  std::map<std::int64_t, std::unique_ptr<JobThread>> runners_;
  std::map<std::int64_t, protocol::ProgressEvent> progress_;  // the latest of each running job
  std::map<std::int64_t, std::chrono::steady_clock::time_point> progress_saved_;
  std::map<std::int64_t, std::vector<std::weak_ptr<transport::ClientConnection>>> watchers_;
  std::map<std::int64_t, std::string> followed_progress_;  // the last progress follow_jobs_elsewhere() sent
  bool stopping_ = false;
  bool pool_stopped_ = false;
};

}  // namespace minifyd::service
