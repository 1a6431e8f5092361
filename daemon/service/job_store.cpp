// What every job store shares: the states' names.
#include "daemon/service/job_store.h"

namespace minifyd::service {

const char* to_string(JobState state) {
  switch (state) {
    case JobState::queued: return "queued";
    case JobState::running: return "running";
    case JobState::done: return "done";
    case JobState::failed: return "failed";
    case JobState::cancelled: return "cancelled";
  }
  return "?";
}

std::optional<JobState> parse_job_state(std::string_view text) {
  for (JobState state : {JobState::queued, JobState::running, JobState::done, JobState::failed, JobState::cancelled})
    if (text == to_string(state)) return state;
  return std::nullopt;
}

bool is_final(JobState state) {
  return state == JobState::done || state == JobState::failed || state == JobState::cancelled;
}

std::string job_name(std::int64_t id) { return "job " + std::to_string(id); }

std::string not_running(const JobClaim& claim) {
  return job_name(claim.id) + " is not running in session " + std::to_string(claim.session);
}

}  // namespace minifyd::service
