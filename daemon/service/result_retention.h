// How long a finished job keeps its blobs (minifyd --keep-results, docs/daemon.md#retention): the
// roots of a job done, failed or cancelled longer ago are removed, so the next gc frees its graphs;
// the job's row stays, and its result reads as expired.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <set>

#include "common/content_store.h"
#include "common/expected.h"
#include "daemon/service/job_store.h"

namespace minifyd::service {

// Unix seconds now, as the job stores' submitted_at and finished_at are.
double unix_now();

// Whether `job` ended more than `keep` before `now` (unix seconds).
bool result_expired(const JobSummary& job, std::chrono::milliseconds keep, double now);

// Removes the roots of every job whose result expired and that is not in `dropped` yet, adding it
// there (so that a daemon reads each expired job's spec once). Returns how many roots went. Their
// blobs go with the next gc.
Expected<std::size_t> drop_expired_roots(const ContentStore& store, const JobStore& jobs,
                                         std::chrono::milliseconds keep, std::set<std::int64_t>& dropped);

}  // namespace minifyd::service
