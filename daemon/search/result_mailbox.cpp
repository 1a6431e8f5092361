// The mailbox's two sides.
#include "daemon/search/result_mailbox.h"

namespace minifyd::search {

std::uint64_t ResultMailbox::expect(std::shared_ptr<CandidateEvaluator::ResultCallback> callback,
                                    std::size_t index) {
  std::uint64_t id = next_id_++;
  expected_.emplace(id, Waiting{std::move(callback), index});
  return id;
}

void ResultMailbox::put(std::uint64_t id, EvaluationResult result) {
  std::lock_guard<std::mutex> lock(mutex_);
  arrived_.emplace_back(id, std::move(result));
  ready_.notify_one();
}

void ResultMailbox::wake() {
  std::lock_guard<std::mutex> lock(mutex_);
  woken_ = true;
  ready_.notify_one();
}

bool ResultMailbox::deliver_until(std::chrono::steady_clock::time_point deadline) {
  std::vector<std::pair<std::uint64_t, EvaluationResult>> arrived;
  bool delivered = false;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    ready_.wait_until(lock, deadline, [&] { return !arrived_.empty() || woken_; });
    arrived.swap(arrived_);
    delivered = std::exchange(woken_, false);
  }
  for (auto& [id, result] : arrived) {
    auto it = expected_.find(id);
    if (it == expected_.end()) continue;  // forgotten since
    Waiting expected = std::move(it->second);
    expected_.erase(it);
    delivered = true;
    (*expected.callback)(expected.index, std::move(result));
  }
  return delivered;
}

std::vector<std::uint64_t> ResultMailbox::forget_all() {
  std::vector<std::uint64_t> ids;
  for (const auto& [id, expected] : expected_) ids.push_back(id);
  expected_.clear();
  return ids;
}

}  // namespace minifyd::search
