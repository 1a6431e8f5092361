// The job result's JSON.
#include "daemon/service/job_result.h"

#include "common/json_view.h"

namespace minifyd::service {

nlohmann::json encode(const JobResult& result) {
  nlohmann::json json = protocol::encode(result.summary);
  json["report"] = result.report;
  return json;
}

Expected<JobResult> decode_job_result(const std::string& text) {
  auto json = parse_json(text);
  if (!json) return make_error(ErrorKind::corrupt, "job result: " + json.error().message);
  JsonView view(*json);
  JobResult result;
  auto decoded = protocol::decode(view, result.summary);
  if (decoded) decoded = view.read("report", result.report);
  if (!decoded) return make_error(ErrorKind::corrupt, "job result: " + decoded.error().message);
  return result;
}

}  // namespace minifyd::service
