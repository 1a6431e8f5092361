// Verdicts already known, so that no candidate is evaluated twice.
#pragma once

#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace minifyd::search {

// Keyed by a candidate's canonical hash, for one evaluation key: everything else that decides a
// verdict (backend, its options, the failure check), which the caller supplies. Thread-safe: the
// search and its speculative lineages share one.
class VerdictCache {
 public:
  explicit VerdictCache(std::string evaluation_key) : evaluation_key_(std::move(evaluation_key)) {}
  const std::string& evaluation_key() const { return evaluation_key_; }

  std::optional<bool> find(const std::string& candidate_hash) const;
  // Records the latest verdict seen for the candidate.
  void store(const std::string& candidate_hash, bool still_fails);
  // Every verdict known, by candidate hash, in hash order (to save and restore a search's cache).
  std::vector<std::pair<std::string, bool>> known() const;

 private:
  std::string evaluation_key_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, bool> verdicts_;  // by candidate hash
};

}  // namespace minifyd::search
