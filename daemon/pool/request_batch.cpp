// A batch of requests to the pool.
#include "daemon/pool/request_batch.h"

#include <optional>
#include <utility>

namespace minifyd::pool {

RequestBatch::RequestBatch(const PoolAccess& access) : access_(access) {}

RequestBatch::~RequestBatch() { cancel_all(); }

RequestBatch::Ticket RequestBatch::submit(protocol::WorkerRequest request, std::chrono::milliseconds timeout,
                                          Answer answer) {
  return submit_ticketed(std::move(request), timeout,
                         [answer = std::move(answer)](Ticket, WorkerOutcome outcome) { answer(std::move(outcome)); });
}

RequestBatch::Ticket RequestBatch::submit_ticketed(protocol::WorkerRequest request, std::chrono::milliseconds timeout,
                                                   TicketedAnswer answer) {
  // The pool never answers inside submit(), so the ticket is known by the time the answer runs.
  auto ticket = std::make_shared<Ticket>();
  *ticket = access_.pool.submit(std::move(request), timeout,
                                [batch = std::weak_ptr<std::set<Ticket>>(unanswered_), ticket,
                                 answer = std::move(answer)](WorkerOutcome outcome) {
                                  auto unanswered = batch.lock();
                                  if (!unanswered || unanswered->erase(*ticket) == 0) return;
                                  answer(*ticket, std::move(outcome));
                                });
  unanswered_->insert(*ticket);
  return *ticket;
}

WorkerOutcome RequestBatch::ask(protocol::WorkerRequest request, std::chrono::milliseconds timeout) {
  std::optional<WorkerOutcome> outcome;
  submit(std::move(request), timeout, [&outcome](WorkerOutcome answered) { outcome = std::move(answered); });
  if (!run_while([&outcome] { return !outcome; }))
    return WorkerFault{WorkerFault::Kind::cancelled, {}, "the worker pool stopped", {}};
  return std::move(*outcome);
}

bool RequestBatch::wait() {
  return run_while([this] { return !unanswered_->empty(); });
}

bool RequestBatch::run_while(const std::function<bool()>& waiting) {
  while (waiting())
    if (access_.io.run_one() == 0) return false;
  return true;
}

bool RequestBatch::cancel_queued(Ticket ticket) {
  return unanswered_->count(ticket) != 0 && access_.pool.cancel_queued(ticket);
}

void RequestBatch::cancel(Ticket ticket) {
  if (unanswered_->count(ticket) != 0) access_.pool.cancel(ticket);
}

void RequestBatch::cancel_all() {
  std::set<Ticket> left;
  left.swap(*unanswered_);
  for (Ticket ticket : left) access_.pool.cancel(ticket);
}

}  // namespace minifyd::pool
