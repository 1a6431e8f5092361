// What the daemon stores as a job's spec: the run's spec and the name its blobs go under in the
// state directory's shared store. The name is chosen before the job has an id, because the
// submitted graph's blobs are imported before the job is recorded: a job never exists without its
// blobs, and blobs of a submit that died half-way are swept at the next start.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "common/expected.h"
#include "daemon/run/run_spec.h"

namespace minifyd::service {

struct JobSpec {
  run::RunSpec run;
  // "job-<unique token>": roots PREFIX-original (the submit's), and PREFIX-intermediates-sN, -shrink-sN
  // and -result-sN of the job's session N (run::RunPlace).
  std::string store_prefix;
};

nlohmann::json encode(const JobSpec& spec);
Expected<JobSpec> decode_job_spec(const std::string& text);

// A fresh prefix, unique across daemon restarts and the hosts of a shared store (time, pid, a
// counter and random bits).
std::string new_store_prefix();
// The suffix of a job's session's roots (run::RunPlace::session_suffix): "-s3".
std::string session_suffix(std::int64_t session);

// A root of some job's store prefix, taken apart: "job-X-intermediates-s3" is {"job-X", "intermediates"}.
struct JobRoot {
  std::string prefix;
  std::string kind;  // original, intermediates, shrink or result
};
// nullopt for a root that is no job's.
std::optional<JobRoot> parse_job_root(const std::string& root);

}  // namespace minifyd::service
