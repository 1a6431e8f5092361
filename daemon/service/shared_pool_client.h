// A job's share of the daemon's pool, as the RequestPool its run drives from the job's own thread.
// Requests cross to the daemon's io thread, where the FairScheduler queues them under the job's
// client; answers cross back to the job's io_context, which the run's thread runs. So the run code
// is the same as `minify run`'s, whose pool lives on its own thread.
#pragma once

#include <memory>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include "daemon/pool/request_pool.h"
#include "daemon/service/fair_scheduler.h"

namespace minifyd::service {

class SharedPoolClient final : public pool::RequestPool {
 public:
  // Registers a client with `scheduler`, which lives on `daemon_io`'s thread.
  SharedPoolClient(boost::asio::io_context& daemon_io, FairScheduler& scheduler, std::size_t parallelism);
  // Cancels whatever the job still has in the pool; answers still on their way are dropped.
  ~SharedPoolClient() override;
  SharedPoolClient(const SharedPoolClient&) = delete;
  SharedPoolClient& operator=(const SharedPoolClient&) = delete;

  // The job thread's view: run `io()` to receive answers. It never runs out of work while this
  // client exists, so run_one() waits for the next answer.
  pool::PoolAccess access() { return pool::PoolAccess{io_, *this, parallelism_}; }

  Ticket submit(protocol::WorkerRequest request, std::chrono::milliseconds timeout, Handler handler) override;
  void cancel(Ticket ticket) override;
  // Queued requests are dropped asynchronously; this always says "may be running" (false), so the
  // caller falls back to cancel() for any that are still unanswered later.
  bool cancel_queued(Ticket ticket) override;

 private:
  struct Shared;

  boost::asio::io_context& daemon_io_;
  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> keep_running_;
  std::size_t parallelism_;
  std::shared_ptr<Shared> shared_;
  Ticket next_ticket_ = 1;
};

}  // namespace minifyd::service
