// What the daemon stores as a done job's result: the run's summary, as the result reply and the end
// event carry it, and its report.md, which needs the finished session to render and so is kept
// beside it rather than rendered again at export.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "common/expected.h"
#include "protocol/run_totals.h"

namespace minifyd::service {

struct JobResult {
  protocol::RunSummary summary;
  std::string report;  // report.md's text
};

// The summary's fields, flat, and "report".
nlohmann::json encode(const JobResult& result);
// Errors (corrupt): not JSON, or a field missing or mistyped, named.
Expected<JobResult> decode_job_result(const std::string& text);

}  // namespace minifyd::service
