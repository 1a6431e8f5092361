// The one way to the pool for a search, a propagation, an analysis, a bisect or a query: a batch of
// requests submitted together, waited for on the pool's thread and cancelled together. Every answer
// runs on that thread; once the batch is gone, the answers still to come are dropped and their
// requests cancelled, so no answer outlives what it was meant for.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <set>

#include <boost/asio/io_context.hpp>

#include "daemon/pool/request_pool.h"

namespace minifyd::pool {

class RequestBatch {
 public:
  using Ticket = RequestPool::Ticket;
  using Answer = std::function<void(WorkerOutcome)>;
  using TicketedAnswer = std::function<void(Ticket, WorkerOutcome)>;  // told which request it answers

  explicit RequestBatch(const PoolAccess& access);
  // cancel_all().
  ~RequestBatch();
  RequestBatch(const RequestBatch&) = delete;
  RequestBatch& operator=(const RequestBatch&) = delete;

  // Queues a request; `answer` runs once, on the pool's thread, never before submit() returns (a
  // cancelled request's answer is a `cancelled` fault).
  Ticket submit(protocol::WorkerRequest request, std::chrono::milliseconds timeout, Answer answer);
  Ticket submit_ticketed(protocol::WorkerRequest request, std::chrono::milliseconds timeout, TicketedAnswer answer);
  // Submits one request and runs the pool's thread until it is answered (a `cancelled` fault if the
  // pool stopped first).
  WorkerOutcome ask(protocol::WorkerRequest request, std::chrono::milliseconds timeout);

  // Runs the pool's thread until every request of the batch is answered; false when the pool ran out
  // of work first (it stopped).
  bool wait();
  // Runs the pool's thread while `waiting()` holds; false when the pool ran out of work first.
  bool run_while(const std::function<bool()>& waiting);

  // RequestPool::cancel_queued and cancel for a request of this batch (its answer still comes, a
  // `cancelled` fault unless it was done first); others are ignored.
  bool cancel_queued(Ticket ticket);
  void cancel(Ticket ticket);
  // Cancels every request not answered yet and drops their answers.
  void cancel_all();

  std::size_t unanswered() const { return unanswered_->size(); }
  std::size_t parallelism() const { return access_.parallelism; }
  boost::asio::io_context& io() const { return access_.io; }

 private:
  PoolAccess access_;
  // Submitted and not answered; the answers hold it weakly, so the batch's end drops them.
  std::shared_ptr<std::set<Ticket>> unanswered_ = std::make_shared<std::set<Ticket>>();
};

}  // namespace minifyd::pool
