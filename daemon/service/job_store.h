// The daemon's jobs: each job's spec, submitted graph, state, latest checkpoint, result and the files
// of its original's analysis, behind one interface whatever database keeps them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.h"

namespace minifyd::service {

enum class JobState { queued, running, done, failed, cancelled };
const char* to_string(JobState state);
std::optional<JobState> parse_job_state(std::string_view text);
// done, failed and cancelled: nothing moves a job out of them.
bool is_final(JobState state);
// How many columns a comma-separated SQL column list names: where the columns selected after it start.
constexpr int sql_column_count(std::string_view columns) {
  int count = 1;
  for (char c : columns) count += c == ',';
  return count;
}

// "job 17", as errors name a job.
std::string job_name(std::int64_t id);


struct NewJob {
  std::string spec_json;   // opaque here (service/job_spec.h)
  std::string graph_json;  // the submitted graph document
  std::string graph_name;  // where it came from, for listings
  int priority = 0;        // higher runs first; FIFO (by id) within a priority
  std::int64_t submitter_uid = 0;  // the uid of the peer whose submit made it (the socket's SO_PEERCRED)
};

// What status and list show: no large columns.
struct JobSummary {
  std::int64_t id = 0;
  JobState state = JobState::queued;
  int priority = 0;
  std::string graph_name;
  double submitted_at = 0;  // unix seconds
  std::optional<double> started_at;
  std::optional<double> finished_at;
  std::int64_t sessions = 0;  // how many times a run of it started (a resumed job has 2 or more)
  std::string progress_json;  // the last progress event saved ("" if none)
  std::string error;          // why it failed
  bool cancel_requested = false;
  std::optional<std::int64_t> submitter_uid;  // none for a job a minifyd before submitters recorded it
};

// A daemon's hold on a job it claimed: the job, and the session its claim started. The session is
// the claim's fencing token: the job's writes name it, and once the job was claimed again (its
// daemon restarted, or, on a shared queue, another daemon took it after this one's lease ran out),
// writes under the old one are refused.
struct JobClaim {
  std::int64_t id = 0;
  std::int64_t session = 0;
};

// What renew() found of a daemon's claims.
struct Renewal {
  std::vector<std::int64_t> lost;              // claimed again since, by this daemon or another
  std::vector<std::int64_t> cancel_requested;  // still held, with a cancel asked for
};

// "job 17 is not running in session 2": why a write under a claim was refused.
std::string not_running(const JobClaim& claim);

struct JobRecord {
  JobClaim claim() const { return JobClaim{summary.id, summary.sessions}; }

  JobSummary summary;
  std::string spec_json;
  std::string graph_json;
  std::optional<std::string> checkpoint_json;
  std::optional<std::string> result_json;
  std::optional<std::string> analysis_json;  // the files of the original's analysis (analysis_files.h)
};

struct JobCounts {
  std::size_t queued = 0, running = 0, done = 0, failed = 0, cancelled = 0;
};

// A daemon of a shared queue as its last heartbeat left it (stats).
struct HostRecord {
  std::string name;             // its --name
  std::size_t workers = 0;      // its pools' slots
  std::string gpus;             // the GPUs its workers are pinned to ("0,1"), "" for CPU workers
  std::size_t running_jobs = 0;
  double started_at = 0;        // unix seconds, the daemon's clock
  double heartbeat_at = 0;      // unix seconds, the database's clock (set by beat())
};

// A job a shared queue says changed: submitted (queued), claimed, ended, its progress saved or a
// cancel asked for, by any of its daemons.
struct JobChange {
  std::int64_t id = 0;
  JobState state = JobState::queued;
};

// A shared queue's changes as they happen (PostgreSQL's LISTEN/NOTIFY), so that an idle daemon claims
// a job submitted through another at once, and a watch follows a job another daemon runs.
class QueueChanges {
 public:
  virtual ~QueueChanges() = default;
  // Readable when changes (or the end of the connection) arrived.
  virtual int socket() const = 0;
  // The changes that arrived; an error once the connection broke (listen again to go on).
  virtual Expected<std::vector<JobChange>> read() = 0;
};

// Where the daemon keeps its jobs: SQLite for one host (sqlite_job_store.h), PostgreSQL for a queue
// that several hosts share (postgres_job_store.h). Every change is one transaction, so a daemon killed
// at any moment finds every job whose submit was answered, with its last checkpoint. Thread-safe: job
// threads save checkpoints while the io thread answers status and list.
class JobStore {
 public:
  virtual ~JobStore() = default;

  virtual Expected<std::int64_t> submit(const NewJob& job) = 0;
  virtual Expected<JobRecord> get(std::int64_t id) const = 0;  // not_found: "no job 17"
  virtual Expected<JobSummary> summary(std::int64_t id) const = 0;
  virtual Expected<std::vector<JobSummary>> list() const = 0;  // by id
  virtual Expected<JobCounts> counts() const = 0;
  // How many jobs `uid` submitted that still wait in the queue (on a shared queue, through any daemon).
  virtual Expected<std::size_t> queued_by(std::int64_t uid) const = 0;

  // The next queued job (highest priority, then lowest id), now running: sessions + 1, started_at
  // set. nullopt when none is queued. No job is claimed twice. Never one of `running_here`, the jobs
  // this daemon still runs: a shared queue's job whose lease ran out while its daemon was stopped
  // stays its runner's (whose renewal extends it) unless another daemon takes it; claimed again by
  // its own daemon, a second runner of it would replace the first one mid-run.
  virtual Expected<std::optional<JobRecord>> claim_next(const std::vector<std::int64_t>& running_here) = 0;
  // Only while the job runs under `claim`.
  virtual Expected<void> save_checkpoint(const JobClaim& claim, const std::string& checkpoint_json) = 0;
  virtual Expected<void> save_analysis(const JobClaim& claim, const std::string& analysis_json) = 0;
  // While the job runs under `claim`, and once it ended under it.
  virtual Expected<void> save_progress(const JobClaim& claim, const std::string& progress_json) = 0;
  // Ends the job running under `claim`. `text`: done: the result's JSON; failed: why; cancelled:
  // ignored. A final job cannot end again.
  virtual Expected<void> finish(const JobClaim& claim, JobState final_state, const std::string& text) = 0;
  // Keeps the claims of running jobs (a shared queue's leases run on from now), and says which of
  // `held` this daemon holds no more (claimed again since, by another daemon: their runners stop
  // without a write; not a job that just ended under its claim) and which a client asked to cancel
  // (through any daemon of the queue).
  virtual Expected<Renewal> renew(const std::vector<JobClaim>& held) = 0;
  // queued: cancelled at once; running: marked, for its runner to stop it; final: an error.
  // Returns the state after the request.
  virtual Expected<JobState> request_cancel(std::int64_t id) = 0;
  // At start: the jobs this daemon's previous process left running go back to the queue with their
  // checkpoints.
  virtual Expected<std::size_t> requeue_interrupted() = 0;
  // A shared queue's record of this daemon, written with each renewal; hosts() lists every daemon's.
  // On a queue of one daemon (SQLite) there is nothing to record, and hosts() is empty.
  virtual Expected<void> beat(const HostRecord& host) = 0;
  virtual Expected<std::vector<HostRecord>> hosts() const = 0;
  // The queue's changes from now on, on a connection of their own; nullptr for a queue that no other
  // daemon changes (SQLite).
  virtual Expected<std::unique_ptr<QueueChanges>> listen() const = 0;
};

}  // namespace minifyd::service
