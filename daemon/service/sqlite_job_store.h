// The job store in one SQLite file (STATE_DIR/jobs.sqlite, WAL), for one host: the embedded default.
#pragma once

#include <filesystem>
#include <memory>

#include "daemon/service/sql_job_store.h"

namespace minifyd::service {

class SqliteJobStore final : public SqlJobStore {
 public:
  // Opens or creates the database. Refuses a file that is not a job database, or one written by a
  // newer minifyd (its schema version), naming the file.
  static Expected<std::unique_ptr<SqliteJobStore>> open(const std::filesystem::path& database);

  Expected<std::int64_t> submit(const NewJob& job) override;
  Expected<std::optional<JobRecord>> claim_next(const std::vector<std::int64_t>& running_here) override;
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
  explicit SqliteJobStore(std::shared_ptr<Connection> connection) : SqlJobStore("jobs"), db_(std::move(connection)) {}
  Expected<void> select(const SqlStatement& statement, const RowReader& read) const override;
  Expected<std::size_t> update(const SqlStatement& statement) override;
  Expected<void> record_end(const JobClaim& claim, const JobEnd& end) override;

  std::shared_ptr<Connection> db_;
};

}  // namespace minifyd::service
