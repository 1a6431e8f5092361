// The job spec's JSON.
#include "daemon/service/job_spec.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <random>

#include "common/json_view.h"
#include "protocol/json_fields.h"

namespace minifyd::service {
namespace {

constexpr const char* prefix_head = "job-";

// Version 0: the specs written before they said their format (5d2cc0d and earlier), the same fields.
constexpr protocol::DocumentFormat job_spec_format{"minifyd.job_spec", 1, 0};

constexpr auto job_spec_fields = [](auto& spec, auto&& field) {
  field("run", spec.run);
  field("store_prefix", spec.store_prefix);
};

}  // namespace

nlohmann::json encode(const JobSpec& spec) { return protocol::encode_document(spec, job_spec_fields, job_spec_format); }

Expected<JobSpec> decode_job_spec(const std::string& text) {
  auto json = parse_json(text);
  if (!json) return make_error(ErrorKind::corrupt, "job spec: " + json.error().message);
  JobSpec spec;
  if (auto decoded = protocol::decode_document(JsonView(*json), spec, job_spec_fields, job_spec_format); !decoded)
    return decoded.error().with_context("job spec");
  return spec;
}

std::string new_store_prefix() {
  static std::atomic<std::uint64_t> counter{0};
  static const std::uint32_t salt = std::random_device{}();
  auto now = std::chrono::duration_cast<std::chrono::microseconds>(
      std::chrono::system_clock::now().time_since_epoch()).count();
  return prefix_head + std::to_string(now) + "-" + std::to_string(::getpid()) + "-" + std::to_string(salt) + "-" +
         std::to_string(counter++);
}

std::string session_suffix(std::int64_t session) { return "-s" + std::to_string(session); }

std::optional<JobRoot> parse_job_root(const std::string& root) {
  if (root.rfind(prefix_head, 0) != 0) return std::nullopt;
  std::string rest = root;
  // A session's suffix, if any: "-s" and digits.
  std::size_t dash = rest.rfind("-s");
  if (dash != std::string::npos && dash + 2 < rest.size() &&
      rest.find_first_not_of("0123456789", dash + 2) == std::string::npos)
    rest.resize(dash);
  for (const char* kind : {"original", "intermediates", "shrink", "result"}) {
    std::string tail = std::string("-") + kind;
    if (rest.size() > tail.size() && rest.compare(rest.size() - tail.size(), tail.size(), tail) == 0)
      return JobRoot{rest.substr(0, rest.size() - tail.size()), kind};
  }
  return std::nullopt;
}

}  // namespace minifyd::service
