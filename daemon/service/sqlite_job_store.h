// The job store in one SQLite file (STATE_DIR/jobs.sqlite, WAL), for one host: the embedded default.
#pragma once

#include <filesystem>
#include <memory>

#include "daemon/service/job_store.h"

namespace minifyd::service {

class SqliteJobStore final : public JobStore {
 public:
  // Opens or creates the database. Refuses a file that is not a job database, or one written by a
  // newer minifyd (its schema version), naming the file.
  static Expected<std::unique_ptr<SqliteJobStore>> open(const std::filesystem::path& database);

  Expected<std::int64_t> submit(const NewJob& job) override;
  Expected<JobRecord> get(std::int64_t id) const override;
  Expected<JobSummary> summary(std::int64_t id) const override;
  Expected<std::vector<JobSummary>> list() const override;
  Expected<JobCounts> counts() const override;
  Expected<std::size_t> queued_by(std::int64_t uid) const override;
  Expected<std::optional<JobRecord>> claim_next(const std::vector<std::int64_t>& running_here) override;
  Expected<void> save_checkpoint(const JobClaim& claim, const std::string& checkpoint_json) override;
  Expected<void> save_analysis(const JobClaim& claim, const std::string& analysis_json) override;
  Expected<void> save_progress(const JobClaim& claim, const std::string& progress_json) override;
  Expected<void> finish(const JobClaim& claim, JobState final_state, const std::string& text) override;
  // One daemon owns the file: a claim is lost only to its own restart.
  Expected<Renewal> renew(const std::vector<JobClaim>& held) override;
  Expected<JobState> request_cancel(std::int64_t id) override;
  // Every running job: one daemon owns the file.
  Expected<std::size_t> requeue_interrupted() override;
  Expected<void> beat(const HostRecord&) override { return {}; }
  Expected<std::vector<HostRecord>> hosts() const override { return std::vector<HostRecord>(); }
  Expected<std::unique_ptr<QueueChanges>> listen() const override { return std::unique_ptr<QueueChanges>(); }

 private:
  struct Connection;
  explicit SqliteJobStore(std::shared_ptr<Connection> connection) : db_(std::move(connection)) {}
  // `column` (a name of the schema's) set to `text`, only while the job runs under `claim`.
  Expected<void> save_while_running(const JobClaim& claim, const char* column, const std::string& text);

  std::shared_ptr<Connection> db_;
};

}  // namespace minifyd::service
