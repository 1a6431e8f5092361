// Driving a pool from the calling thread.
#include "daemon/pool/local_pool.h"

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

}  // namespace minifyd::pool
