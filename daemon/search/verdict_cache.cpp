// The verdict cache.
#include "daemon/search/verdict_cache.h"

#include <algorithm>

namespace minifyd::search {

std::optional<bool> VerdictCache::find(const std::string& candidate_hash) const {
  auto it = verdicts_.find(candidate_hash);
  if (it == verdicts_.end()) return std::nullopt;
  return it->second;
}

void VerdictCache::store(const std::string& candidate_hash, bool still_fails) {
  verdicts_[candidate_hash] = still_fails;
}

std::vector<std::pair<std::string, bool>> VerdictCache::known() const {
  std::vector<std::pair<std::string, bool>> known(verdicts_.begin(), verdicts_.end());
  std::sort(known.begin(), known.end());
  return known;
}

}  // namespace minifyd::search
