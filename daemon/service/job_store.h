// The daemon's jobs, persistent in SQLite (STATE_DIR/jobs.sqlite, WAL): each job's spec, submitted
// graph, state, latest checkpoint, result and the files of its original's analysis. Every change is
// one transaction, so a daemon killed at any moment finds every job whose submit was answered, with
// its last checkpoint. Thread-safe: job
// threads save checkpoints while the io thread answers status and list.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.h"

struct sqlite3;

namespace minifyd::service {

enum class JobState { queued, running, done, failed, cancelled };
const char* to_string(JobState state);
std::optional<JobState> parse_job_state(std::string_view text);
// done, failed and cancelled: nothing moves a job out of them.
bool is_final(JobState state);

struct NewJob {
  std::string spec_json;   // opaque here (service/job_spec.h)
  std::string graph_json;  // the submitted graph document
  std::string graph_name;  // where it came from, for listings
  int priority = 0;        // higher runs first; FIFO (by id) within a priority
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
};

struct JobRecord {
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

class JobStore {
 public:
  // Opens or creates the database. Refuses a file that is not a job database, or one written by a
  // newer minifyd (its schema version), naming the file.
  static Expected<JobStore> open(const std::filesystem::path& database);

  Expected<std::int64_t> submit(const NewJob& job);
  Expected<JobRecord> get(std::int64_t id) const;  // not_found: "no job 17"
  Expected<JobSummary> summary(std::int64_t id) const;
  Expected<std::vector<JobSummary>> list() const;  // by id
  Expected<JobCounts> counts() const;

  // The next queued job (highest priority, then lowest id), now running: sessions + 1, started_at
  // set. nullopt when none is queued.
  Expected<std::optional<JobRecord>> claim_next();
  // Only while the job runs.
  Expected<void> save_checkpoint(std::int64_t id, const std::string& checkpoint_json);
  Expected<void> save_analysis(std::int64_t id, const std::string& analysis_json);
  Expected<void> save_progress(std::int64_t id, const std::string& progress_json);
  // Ends a running job (or a queued one, when cancelled). `text`: done: the result's JSON; failed:
  // why; cancelled: ignored. A final job cannot end again.
  Expected<void> finish(std::int64_t id, JobState final_state, const std::string& text);
  // queued: cancelled at once; running: marked, for its runner to stop it; final: an error.
  // Returns the state after the request.
  Expected<JobState> request_cancel(std::int64_t id);
  // At start: jobs a killed daemon left running go back to the queue with their checkpoints.
  Expected<std::size_t> requeue_interrupted();

 private:
  struct Connection;
  explicit JobStore(std::shared_ptr<Connection> connection) : db_(std::move(connection)) {}
  // `column` (a name of the schema's) set to `text`, only while the job runs.
  Expected<void> save_while_running(std::int64_t id, const char* column, const std::string& text);

  std::shared_ptr<Connection> db_;
};

}  // namespace minifyd::service
