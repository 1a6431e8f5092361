// The verdict cache.
#include "daemon/search/verdict_cache.h"

#include <algorithm>

namespace minifyd::search {

std::optional<bool> VerdictCache::find(const std::string& candidate_hash) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = verdicts_.find(candidate_hash);
  if (it == verdicts_.end()) return std::nullopt;
  return it->second;
}

void VerdictCache::store(const std::string& candidate_hash, bool still_fails) {
  std::lock_guard<std::mutex> lock(mutex_);
  verdicts_[candidate_hash] = still_fails;
}

std::vector<std::pair<std::string, bool>> VerdictCache::known() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::pair<std::string, bool>> known(verdicts_.begin(), verdicts_.end());
  std::sort(known.begin(), known.end());
  return known;
}

}  // namespace minifyd::search
