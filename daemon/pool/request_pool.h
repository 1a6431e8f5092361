// What a search or a query needs of a worker pool: submit a request, cancel it. The WorkerPool
// itself implements it for commands that own their pool (`minify run`, `minify query`); the daemon
// gives each job a share of one pool behind the same interface (service/shared_pool_client.h).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>

#include <boost/asio/io_context.hpp>

#include "daemon/pool/worker_process.h"

namespace minifyd::pool {

class RequestPool {
 public:
  using Ticket = std::uint64_t;
  using Handler = std::function<void(WorkerOutcome)>;

  virtual ~RequestPool() = default;
  // Queues a request; its handler is called exactly once, never before submit() returns.
  virtual Ticket submit(protocol::WorkerRequest request, std::chrono::milliseconds timeout, Handler handler) = 0;
  // A queued request is dropped; a running one is stopped: on a concurrent worker its child is
  // killed and the worker serves on, otherwise the worker is killed (and replaced). Either way the
  // handler gets a `cancelled` fault. Unknown or finished tickets are ignored.
  virtual void cancel(Ticket ticket) = 0;
  // Drops the request if it is known to be still queued (its handler gets a `cancelled` fault) and
  // says so; false when it may be running or is finished, which cancel() would have to kill.
  virtual bool cancel_queued(Ticket ticket) = 0;
};

// A pool as seen from the thread that drives it: handlers run on `io`, from that thread's calls to
// io.run_one(). `parallelism`: how many requests it is worth keeping in flight.
struct PoolAccess {
  boost::asio::io_context& io;
  RequestPool& pool;
  std::size_t parallelism = 1;
};

}  // namespace minifyd::pool
