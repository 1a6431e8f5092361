// What a pool does as it does it, for a run's timeline (run/timeline.h): workers launched, up, failed
// to start and retired; requests sent to a worker and answered. Told on the pool's io thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

#include "daemon/pool/worker_process.h"

namespace minifyd::pool {

struct PoolEvent {
  enum class Kind { worker_launched, worker_ready, worker_start_failed, worker_retired, request_sent, request_answered };
  Kind kind = Kind::worker_launched;
  std::size_t slot = 0;        // the worker's slot; unknown (0) for worker_retired
  int pid = 0;                 // the worker's
  bool spare = false;          // worker_launched: as the slot's warm spare
  std::uint64_t ticket = 0;    // request_sent, request_answered
  const protocol::WorkerRequest* request = nullptr;  // request_sent
  const WorkerOutcome* outcome = nullptr;            // request_answered

  static PoolEvent of_worker(Kind kind, std::size_t slot, int pid, bool spare = false) {
    return PoolEvent{kind, slot, pid, spare, 0, nullptr, nullptr};
  }
  static PoolEvent sent(std::size_t slot, int pid, std::uint64_t ticket, const protocol::WorkerRequest& request) {
    return PoolEvent{Kind::request_sent, slot, pid, false, ticket, &request, nullptr};
  }
  static PoolEvent answered(std::size_t slot, int pid, std::uint64_t ticket, const WorkerOutcome& outcome) {
    return PoolEvent{Kind::request_answered, slot, pid, false, ticket, nullptr, &outcome};
  }
};

using PoolEventSink = std::function<void(const PoolEvent&)>;

}  // namespace minifyd::pool
