// The row mapping both job stores share.
#include "daemon/service/job_row.h"

namespace minifyd::service {

std::optional<std::string> JobRow::optional_text(int column) const {
  return is_null(column) ? std::nullopt : std::optional<std::string>(text(column));
}

std::optional<std::int64_t> JobRow::optional_integer(int column) const {
  return is_null(column) ? std::nullopt : std::optional<std::int64_t>(integer(column));
}

std::optional<double> JobRow::optional_real(int column) const {
  return is_null(column) ? std::nullopt : std::optional<double>(real(column));
}

JobSummary read_job_summary(const JobRow& row) {
  JobSummary job;
  job.id = row.integer(0);
  job.state = parse_job_state(row.text(1)).value_or(JobState::failed);
  job.priority = static_cast<int>(row.integer(2));
  job.graph_name = row.text(3);
  job.submitted_at = row.real(4);
  job.started_at = row.optional_real(5);
  job.finished_at = row.optional_real(6);
  job.sessions = row.integer(7);
  job.progress_json = row.text(8);
  job.error = row.text(9);
  job.cancel_requested = row.boolean(10);
  job.submitter_uid = row.optional_integer(11);
  return job;
}

JobRecord read_job_record(const JobRow& row) {
  constexpr int first = sql_column_count(job_summary_columns);  // the record's own columns, after the summary's
  JobRecord record;
  record.summary = read_job_summary(row);
  record.spec_json = row.text(first);
  record.graph_json = row.text(first + 1);
  record.checkpoint_json = row.optional_text(first + 2);
  record.result_json = row.optional_text(first + 3);
  record.analysis_json = row.optional_text(first + 4);
  return record;
}

}  // namespace minifyd::service
