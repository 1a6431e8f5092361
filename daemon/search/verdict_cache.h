// Verdicts already known, so that no candidate is evaluated twice.
#pragma once

#include <optional>
#include <string>
#include <unordered_map>

namespace minifyd::search {

// Keyed by a candidate's canonical hash together with a key the caller supplies for everything
// else that decides a verdict (backend, its options, the failure check), so one cache may serve
// several searches. Not thread-safe.
class VerdictCache {
 public:
  explicit VerdictCache(std::string evaluation_key) : evaluation_key_(std::move(evaluation_key)) {}

  std::optional<bool> find(const std::string& candidate_hash) const;
  // Records the latest verdict seen for the candidate.
  void store(const std::string& candidate_hash, bool still_fails);

 private:
  std::string key(const std::string& candidate_hash) const;

  std::string evaluation_key_;
  std::unordered_map<std::string, bool> verdicts_;
};

}  // namespace minifyd::search
