// Driving a pool from the calling thread.
#include "daemon/pool/local_pool.h"

#include <optional>

namespace minifyd::pool {

LocalPool::LocalPool(PoolConfig config) : pool(io, std::move(config)) { pool.start(); }

LocalPool::~LocalPool() {
  stop_soon();
  while (!stopped_ && io.run_one() != 0) {
  }
}

void LocalPool::stop_soon() {
  if (stopping_) return;
  stopping_ = true;
  pool.stop([this] { stopped_ = true; });
  io.poll();  // the shutdown lines, written now
}

WorkerOutcome request_and_wait(const PoolAccess& access, protocol::WorkerRequest request,
                               std::chrono::milliseconds timeout) {
  std::optional<WorkerOutcome> outcome;
  access.pool.submit(std::move(request), timeout, [&](WorkerOutcome result) { outcome = std::move(result); });
  while (!outcome && access.io.run_one() != 0) {
  }
  if (!outcome) return WorkerFault{WorkerFault::Kind::cancelled, {}, "the worker pool stopped", {}};
  return std::move(*outcome);
}

}  // namespace minifyd::pool
