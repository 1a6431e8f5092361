// What every job store shares: the states' names, a job's name in errors.
#include "daemon/service/job_store.h"

#include "protocol/enum_names.h"

namespace minifyd::service {

namespace {

constexpr protocol::EnumName<JobState> state_names[] = {{JobState::queued, "queued"},
                                                        {JobState::running, "running"},
                                                        {JobState::done, "done"},
                                                        {JobState::failed, "failed"},
                                                        {JobState::cancelled, "cancelled"}};

}  // namespace

const char* to_string(JobState state) { return protocol::name_of(state_names, state); }

std::optional<JobState> parse_job_state(std::string_view text) {
  return protocol::parse_name(state_names, std::string(text));
}

bool is_final(JobState state) {
  return state == JobState::done || state == JobState::failed || state == JobState::cancelled;
}

std::string job_name(std::int64_t id) { return "job " + std::to_string(id); }

std::string not_running(const JobClaim& claim) {
  return job_name(claim.id) + " is not running in session " + std::to_string(claim.session);
}

}  // namespace minifyd::service
