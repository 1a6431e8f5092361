// The job store in PostgreSQL (libpq): one queue that the minifyd of several hosts can share. Each
// daemon names itself (its owner name) when it opens the store: the jobs it claims are marked as its
// own, under a lease that its renew() extends; a job whose lease ran out (its daemon was killed,
// stopped, or cut off) is claimed again by whichever daemon claims next, in a new session, and the
// old claim's writes are refused from then on. At its start a daemon requeues only its own jobs.
// Every claim, renewal, requeue and end is recorded in minifyd_job_events, with the lease's end.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "daemon/service/sql_job_store.h"

namespace minifyd::service {

// Whether `location` names a PostgreSQL database (a postgresql:// or postgres:// URL) rather than a file.
bool is_postgres_url(const std::string& location);

class PostgresJobStore final : public SqlJobStore {
 public:
  // Connects to the database at `url` and brings its schema up to this minifyd's version (several
  // daemons starting at once upgrade it once). Refuses a schema newer than this minifyd's, and a
  // database whose tables are not a job queue's. Errors name the database, never the URL's password.
  static Expected<std::unique_ptr<PostgresJobStore>> open(const std::string& url, std::string owner,
                                                          std::chrono::milliseconds lease);
  ~PostgresJobStore() override;

  Expected<std::int64_t> submit(const NewJob& job) override;
  // A queued job, or a running one whose lease ran out, claimed for this store's owner under FOR
  // UPDATE SKIP LOCKED: daemons claiming at once take different jobs without waiting for each other.
  Expected<std::optional<JobRecord>> claim_next(const std::vector<std::int64_t>& running_here) override;
  // Extends the leases of `held` that this owner still holds, by the lease's length from now.
  Expected<Renewal> renew(const std::vector<JobClaim>& held) override;
  Expected<JobState> request_cancel(std::int64_t id) override;
  // The running jobs this store's owner claimed.
  Expected<std::size_t> requeue_interrupted() override;
  // This store's owner's row of minifyd_hosts (host.name is ignored), its heartbeat now.
  Expected<void> beat(const HostRecord& host) override;
  Expected<std::vector<HostRecord>> hosts() const override;  // by name
  // LISTEN on a second connection to the database: every insert into minifyd_jobs and every change of
  // a job's state, progress or cancel is notified (a trigger, schema 3).
  Expected<std::unique_ptr<QueueChanges>> listen() const override;
  // The content store's directory that every daemon of the queue shares: the one the queue records,
  // which `proposed` (absolute, or "" to take the queue's) must be, or `proposed` recorded by the first
  // daemon that names one. Errors name both directories, or say that no daemon named one yet.
  Expected<std::string> shared_store(const std::string& proposed);

 private:
  class Connection;
  PostgresJobStore(std::unique_ptr<Connection> connection, std::string url);
  Expected<void> select(const SqlStatement& statement, const RowReader& read) const override;
  Expected<std::size_t> update(const SqlStatement& statement) override;
  Expected<void> record_end(const JobClaim& claim, const JobEnd& end) override;

  std::unique_ptr<Connection> db_;
  std::string url_;  // for listen()'s connection
};

}  // namespace minifyd::service
