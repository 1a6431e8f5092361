// The job result's JSON.
#include "daemon/service/job_result.h"

#include "common/json_view.h"
#include "protocol/json_fields.h"

namespace minifyd::service {
namespace {

// Version 0: the results written before they said their format (5d2cc0d and earlier), the same fields.
constexpr protocol::DocumentFormat job_result_format{"minifyd.job_result", 1, 0};

constexpr auto job_result_fields = [](auto& result, auto&& field) {
  protocol::run_summary_fields(result.summary, field);
  field("report", result.report);
};

}  // namespace

nlohmann::json encode(const JobResult& result) {
  return protocol::encode_document(result, job_result_fields, job_result_format);
}

Expected<JobResult> decode_job_result(const std::string& text) {
  auto json = parse_json(text);
  if (!json) return make_error(ErrorKind::corrupt, "job result: " + json.error().message);
  JobResult result;
  if (auto decoded = protocol::decode_document(JsonView(*json), result, job_result_fields, job_result_format); !decoded)
    return make_error(ErrorKind::corrupt, "job result: " + decoded.error().message);
  return result;
}

}  // namespace minifyd::service
