// The verdict cache.
#include "daemon/search/verdict_cache.h"

namespace minifyd::search {

std::string VerdictCache::key(const std::string& candidate_hash) const {
  // A hash never contains a newline, so the pair maps to the key one-to-one.
  return candidate_hash + '\n' + evaluation_key_;
}

std::optional<bool> VerdictCache::find(const std::string& candidate_hash) const {
  auto it = verdicts_.find(key(candidate_hash));
  if (it == verdicts_.end()) return std::nullopt;
  return it->second;
}

void VerdictCache::store(const std::string& candidate_hash, bool still_fails) {
  verdicts_[key(candidate_hash)] = still_fails;
}

}  // namespace minifyd::search
