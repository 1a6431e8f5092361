// What both job stores do alike, written once: the reads (a job's record and summary, the list, the
// counts by state, a submitter's queued jobs) and the saves under a claim (a running job's checkpoint,
// analysis and progress) in SQL that SQLite and PostgreSQL both take (parameters $1, $2, ... bound as
// text), over two primitives each store implements, select() and update(); and finish()'s check of
// the end it is given, before the store records it its own way.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "daemon/service/job_row.h"
#include "daemon/service/job_store.h"

namespace minifyd::service {

// A statement in SQL both databases take, its parameters ($1 first) as text, and what it does in the
// words of an error ("listing jobs").
struct SqlStatement {
  std::string doing;
  std::string sql;
  std::vector<std::string> parameters;
};
// What reads each row a query selects.
using RowReader = std::function<void(const JobRow&)>;

// A job's end as a store records it: its final state, and its result (done) or why it failed (failed),
// each "" otherwise.
struct JobEnd {
  JobState state = JobState::done;
  std::string result;
  std::string error;
};

class SqlJobStore : public JobStore {
 public:
  Expected<JobRecord> get(std::int64_t id) const final;
  Expected<JobSummary> summary(std::int64_t id) const final;
  Expected<std::vector<JobSummary>> list() const final;
  Expected<JobCounts> counts() const final;
  Expected<std::size_t> queued_by(std::int64_t uid) const final;
  Expected<void> save_checkpoint(const JobClaim& claim, const std::string& checkpoint_json) final;
  Expected<void> save_analysis(const JobClaim& claim, const std::string& analysis_json) final;
  Expected<void> save_progress(const JobClaim& claim, const std::string& progress_json) final;
  // Errors: invalid_input for a state that is not final, else record_end's.
  Expected<void> finish(const JobClaim& claim, JobState final_state, const std::string& text) final;

 protected:
  // `table`: the jobs' table, as the store's schema names it.
  explicit SqlJobStore(const char* table) : table_(table) {}

  // Runs the query and hands each row it selects to `read`, in order, under the store's lock. An error
  // names what was being done and the database's words.
  virtual Expected<void> select(const SqlStatement& statement, const RowReader& read) const = 0;
  // Runs the statement under the store's lock: how many rows it changed.
  virtual Expected<std::size_t> update(const SqlStatement& statement) = 0;
  // Records the end of the job running under `claim`; not_found when it no longer runs under it.
  virtual Expected<void> record_end(const JobClaim& claim, const JobEnd& end) = 0;

 private:
  // `column` (a name of the schema's) set to `text` while the job runs under `claim`, and then only
  // where `running_only`.
  Expected<void> save_under_claim(const JobClaim& claim, const char* column, const std::string& text, bool running_only);
  // `columns` of job `id`, read by `read`; not_found: "no job 17".
  Expected<void> select_job(std::int64_t id, const char* columns, const RowReader& read) const;

  const char* table_;
};

}  // namespace minifyd::service
