// Shares the daemon's one WorkerPool among its clients (running jobs and one-off queries). Each
// client's requests wait in a queue of their own; whenever the pool has a free slot, the next client
// in round-robin order that has a request waiting gets it. So a job with hundreds of candidates
// pending cannot starve one with a single candidate, and J busy jobs get about 1/J of the pool
// each. Lives on the daemon's io thread: every method and handler runs there.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "daemon/pool/worker_pool.h"

namespace minifyd::service {

class FairScheduler {
 public:
  using ClientId = std::uint64_t;
  using Ticket = pool::RequestPool::Ticket;

  FairScheduler(boost::asio::io_context& io, pool::WorkerPool& pool);
  ~FairScheduler();
  FairScheduler(const FairScheduler&) = delete;
  FairScheduler& operator=(const FairScheduler&) = delete;

  ClientId add_client();
  // Cancels every request of the client (their handlers get `cancelled` faults) and forgets it.
  void remove_client(ClientId client);

  // As RequestPool, per client. An unknown client's request is answered with a `cancelled` fault.
  Ticket submit(ClientId client, protocol::WorkerRequest request, std::chrono::milliseconds timeout,
                pool::RequestPool::Handler handler);
  void cancel(Ticket ticket);
  bool cancel_queued(Ticket ticket);

  std::size_t waiting() const;                    // requests of every client not yet in the pool
  std::size_t running() const { return running_.size(); }
  std::size_t clients() const { return queues_.size(); }

 private:
  struct Waiting {
    Ticket ticket;
    protocol::WorkerRequest request;
    std::chrono::milliseconds timeout;
    pool::RequestPool::Handler handler;
  };

  // Hands waiting requests to the pool while it has free slots, one client after another.
  void dispatch();
  std::optional<ClientId> next_client();
  void answer_cancelled(pool::RequestPool::Handler handler, const char* why);

  boost::asio::io_context& io_;
  pool::WorkerPool& pool_;
  std::map<ClientId, std::deque<Waiting>> queues_;
  std::map<Ticket, ClientId> owner_;          // every live ticket, waiting or running
  std::map<Ticket, Ticket> running_;          // our ticket -> the pool's
  ClientId next_client_ = 1;
  ClientId last_served_ = 0;
  Ticket next_ticket_ = 1;
  bool dispatching_ = false;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace minifyd::service
