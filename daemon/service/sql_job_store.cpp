// The job stores' shared reads and saves.
#include "daemon/service/sql_job_store.h"

namespace minifyd::service {

Expected<void> SqlJobStore::select_job(std::int64_t id, const char* columns,
                                       const RowReader& read) const {
  bool found = false;
  SqlStatement query{"reading " + job_name(id), std::string("SELECT ") + columns + " FROM " + table_ + " WHERE id = $1",
                     {std::to_string(id)}};
  auto selected = select(query, [&](const JobRow& row) {
    found = true;
    read(row);
  });
  if (!selected) return selected.error();
  if (!found) return make_error(ErrorKind::not_found, "no " + job_name(id));
  return {};
}

Expected<JobRecord> SqlJobStore::get(std::int64_t id) const {
  JobRecord record;
  auto selected = select_job(id, job_record_columns, [&](const JobRow& row) { record = read_job_record(row); });
  if (!selected) return selected.error();
  return record;
}

Expected<JobSummary> SqlJobStore::summary(std::int64_t id) const {
  JobSummary summary;
  auto selected = select_job(id, job_summary_columns, [&](const JobRow& row) { summary = read_job_summary(row); });
  if (!selected) return selected.error();
  return summary;
}

Expected<std::vector<JobSummary>> SqlJobStore::list() const {
  std::vector<JobSummary> jobs;
  SqlStatement query{"listing jobs", std::string("SELECT ") + job_summary_columns + " FROM " + table_ + " ORDER BY id", {}};
  auto selected = select(query, [&](const JobRow& row) { jobs.push_back(read_job_summary(row)); });
  if (!selected) return selected.error();
  return jobs;
}

Expected<JobCounts> SqlJobStore::counts() const {
  JobCounts counts;
  SqlStatement query{"counting jobs", std::string("SELECT state, count(*) FROM ") + table_ + " GROUP BY state", {}};
  auto selected = select(query, [&](const JobRow& row) {
    auto count = static_cast<std::size_t>(row.integer(1));
    switch (parse_job_state(row.text(0)).value_or(JobState::failed)) {
      case JobState::queued: counts.queued += count; break;
      case JobState::running: counts.running += count; break;
      case JobState::done: counts.done += count; break;
      case JobState::failed: counts.failed += count; break;
      case JobState::cancelled: counts.cancelled += count; break;
    }
  });
  if (!selected) return selected.error();
  return counts;
}

Expected<std::size_t> SqlJobStore::queued_by(std::int64_t uid) const {
  std::size_t queued = 0;
  SqlStatement query{"counting the jobs of uid " + std::to_string(uid),
                     std::string("SELECT count(*) FROM ") + table_ + " WHERE state = 'queued' AND submitter_uid = $1",
                     {std::to_string(uid)}};
  auto selected = select(query, [&](const JobRow& row) { queued = static_cast<std::size_t>(row.integer(0)); });
  if (!selected) return selected.error();
  return queued;
}

Expected<void> SqlJobStore::save_under_claim(const JobClaim& claim, const char* column, const std::string& text,
                                             bool running_only) {
  std::string sql = std::string("UPDATE ") + table_ + " SET " + column + " = $1 WHERE id = $2 AND sessions = $3" +
                    (running_only ? " AND state = 'running'" : "");
  auto changed = update({std::string("saving the ") + column + " of " + job_name(claim.id), sql,
                         {text, std::to_string(claim.id), std::to_string(claim.session)}});
  if (!changed) return changed.error();
  if (*changed == 0) return make_error(ErrorKind::not_found, not_running(claim) + ": " + column + " not saved");
  return {};
}

Expected<void> SqlJobStore::save_checkpoint(const JobClaim& claim, const std::string& checkpoint_json) {
  return save_under_claim(claim, "checkpoint", checkpoint_json, true);
}

Expected<void> SqlJobStore::save_analysis(const JobClaim& claim, const std::string& analysis_json) {
  return save_under_claim(claim, "analysis", analysis_json, true);
}

// Also once the job ended under the claim: a finished job's listing shows the figures it ended with.
Expected<void> SqlJobStore::save_progress(const JobClaim& claim, const std::string& progress_json) {
  return save_under_claim(claim, "progress", progress_json, false);
}

Expected<void> SqlJobStore::finish(const JobClaim& claim, JobState final_state, const std::string& text) {
  if (!is_final(final_state))
    return make_error(ErrorKind::invalid_input, std::string("finishing ") + job_name(claim.id) + " as " + to_string(final_state));
  return record_end(claim, JobEnd{final_state, final_state == JobState::done ? text : std::string(),
                                  final_state == JobState::failed ? text : std::string()});
}

}  // namespace minifyd::service
