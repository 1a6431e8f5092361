// A WorkerPool and its io_context driven from the calling thread, for commands that do their work
// on that thread (`minify query`, `minify run`) rather than on a service's event loop.
#pragma once

#include <cstddef>

#include <boost/asio/io_context.hpp>

#include "daemon/pool/request_pool.h"
#include "daemon/pool/worker_pool.h"

namespace minifyd::pool {

struct LocalPool {
  // Starts the pool's workers.
  explicit LocalPool(PoolConfig config);
  // Stops the pool (unless stop_soon() did) and runs it until every worker is reaped.
  ~LocalPool();
  LocalPool(const LocalPool&) = delete;
  LocalPool& operator=(const LocalPool&) = delete;

  // The pool as the calling thread drives it, one request in flight per slot.
  PoolAccess access() { return PoolAccess{io, pool, pool.capacity()}; }
  // Tells the workers to exit and returns: they do (a LibTorch process takes some 20 ms to) while the
  // caller goes on; the destructor reaps them. Nothing is submitted afterwards.
  void stop_soon();

  boost::asio::io_context io;
  WorkerPool pool;

 private:
  bool stopping_ = false;
  bool stopped_ = false;
};

}  // namespace minifyd::pool
