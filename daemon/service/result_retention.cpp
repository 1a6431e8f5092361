// Finished jobs' roots dropped after their retention.
#include "daemon/service/result_retention.h"

#include <map>
#include <vector>

#include "daemon/service/job_spec.h"

namespace minifyd::service {

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

bool result_expired(const JobSummary& job, std::chrono::milliseconds keep, double now) {
  return is_final(job.state) && job.finished_at && *job.finished_at + std::chrono::duration<double>(keep).count() < now;
}

Expected<std::size_t> drop_expired_roots(const ContentStore& store, const JobStore& jobs,
                                         std::chrono::milliseconds keep, std::set<std::int64_t>& dropped) {
  auto roots = store.root_names();
  if (!roots) return roots.error();
  std::map<std::string, std::vector<std::string>> roots_by_prefix;
  for (const std::string& root : *roots)
    if (auto parsed = parse_job_root(root)) roots_by_prefix[parsed->prefix].push_back(root);
  auto listed = jobs.list();
  if (!listed) return listed.error();
  double now = unix_now();
  std::size_t removed = 0;
  for (const JobSummary& job : *listed) {
    if (dropped.count(job.id) != 0 || !result_expired(job, keep, now)) continue;
    auto record = jobs.get(job.id);
    if (!record) return record.error();
    auto spec = decode_job_spec(record->spec_json);
    if (!spec) return spec.error().with_context(job_name(job.id));
    for (const std::string& root : roots_by_prefix[spec->store_prefix]) {
      if (auto gone = store.remove_root(root); !gone) return gone.error();
      ++removed;
    }
    dropped.insert(job.id);
  }
  return removed;
}

}  // namespace minifyd::service
