// A job's row as both job stores keep it: one list of columns and one mapping of them to JobSummary and
// JobRecord, read through JobRow, which each store implements over its database's result (SQLite's
// statement, libpq's result).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "daemon/service/job_store.h"

namespace minifyd::service {

// The columns status and list read, in read_job_summary()'s order.
#define MINIFYD_JOB_SUMMARY_COLUMNS                                                                             \
  "id, state, priority, graph_name, submitted_at, started_at, finished_at, sessions, progress, error, "         \
  "cancel_requested, submitter_uid"
inline constexpr const char* job_summary_columns = MINIFYD_JOB_SUMMARY_COLUMNS;
// The summary's columns, then the record's own, in read_job_record()'s order.
inline constexpr const char* job_record_columns = MINIFYD_JOB_SUMMARY_COLUMNS ", spec, graph, checkpoint, result, analysis";
#undef MINIFYD_JOB_SUMMARY_COLUMNS

// One selected row's values by column index, as the database gives them.
class JobRow {
 public:
  virtual ~JobRow() = default;
  virtual bool is_null(int column) const = 0;
  virtual std::string text(int column) const = 0;     // "" for NULL
  virtual std::int64_t integer(int column) const = 0;  // 0 for NULL
  virtual double real(int column) const = 0;           // 0 for NULL
  virtual bool boolean(int column) const = 0;          // false for NULL

  std::optional<std::string> optional_text(int column) const;
  std::optional<std::int64_t> optional_integer(int column) const;
  std::optional<double> optional_real(int column) const;
};

// A row of job_summary_columns.
JobSummary read_job_summary(const JobRow& row);
// A row of job_record_columns.
JobRecord read_job_record(const JobRow& row);

}  // namespace minifyd::service
