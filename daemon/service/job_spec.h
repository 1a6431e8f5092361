// What the daemon stores as a job's spec: the run's spec and the name its blobs go under in the
// state directory's shared store. The name is chosen before the job has an id, because the
// submitted graph's blobs are imported before the job is recorded: a job never exists without its
// blobs, and blobs of a submit that died half-way are swept at the next start.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "common/expected.h"
#include "daemon/run/run_spec.h"

namespace minifyd::service {

struct JobSpec {
  run::RunSpec run;
  std::string store_prefix;  // "job-<unique token>": roots PREFIX-original, -intermediates, -result
};

nlohmann::json encode(const JobSpec& spec);
Expected<JobSpec> decode_job_spec(const std::string& text);

// A fresh prefix, unique across daemon restarts (time, pid and a counter).
std::string new_store_prefix();
// Whether `root` is a root of some job's store prefix ("job-..."), and that prefix.
std::string store_prefix_of_root(const std::string& root);

}  // namespace minifyd::service
