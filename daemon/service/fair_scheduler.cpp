// Round-robin over clients with waiting requests.
#include "daemon/service/fair_scheduler.h"

#include <boost/asio/post.hpp>

namespace minifyd::service {

FairScheduler::FairScheduler(boost::asio::io_context& io, pool::WorkerPool& pool) : io_(io), pool_(pool) {}

FairScheduler::~FairScheduler() {
  alive_.reset();
  for (const auto& [ticket, pool_ticket] : running_) pool_.cancel(pool_ticket);
}

FairScheduler::ClientId FairScheduler::add_client() {
  ClientId client = next_client_++;
  queues_.emplace(client, std::deque<Waiting>{});
  return client;
}

void FairScheduler::remove_client(ClientId client) {
  auto queue = queues_.find(client);
  if (queue == queues_.end()) return;
  std::deque<Waiting> waiting = std::move(queue->second);
  queues_.erase(queue);
  for (Waiting& request : waiting) {
    owner_.erase(request.ticket);
    answer_cancelled(std::move(request.handler), "the job stopped");
  }
  std::vector<Ticket> running;
  for (const auto& [ticket, owner] : owner_)
    if (owner == client) running.push_back(ticket);
  for (Ticket ticket : running) cancel(ticket);
}

FairScheduler::Ticket FairScheduler::submit(ClientId client, protocol::WorkerRequest request,
                                            std::chrono::milliseconds timeout, pool::RequestPool::Handler handler) {
  Ticket ticket = next_ticket_++;
  auto queue = queues_.find(client);
  if (queue == queues_.end()) {
    answer_cancelled(std::move(handler), "no such client");
    return ticket;
  }
  queue->second.push_back(Waiting{ticket, std::move(request), timeout, std::move(handler)});
  owner_.emplace(ticket, client);
  dispatch();
  return ticket;
}

void FairScheduler::cancel(Ticket ticket) {
  if (cancel_queued(ticket)) return;
  if (auto running = running_.find(ticket); running != running_.end()) pool_.cancel(running->second);
}

bool FairScheduler::cancel_queued(Ticket ticket) {
  auto owner = owner_.find(ticket);
  if (owner == owner_.end() || running_.count(ticket) != 0) return false;
  std::deque<Waiting>& queue = queues_.at(owner->second);
  for (auto it = queue.begin(); it != queue.end(); ++it) {
    if (it->ticket != ticket) continue;
    pool::RequestPool::Handler handler = std::move(it->handler);
    queue.erase(it);
    owner_.erase(owner);
    answer_cancelled(std::move(handler), "cancelled while queued");
    return true;
  }
  return false;
}

std::size_t FairScheduler::waiting() const {
  std::size_t total = 0;
  for (const auto& [client, queue] : queues_) total += queue.size();
  return total;
}

void FairScheduler::dispatch() {
  // A pool handler may run inside pool_.submit() on a failing slot; it re-enters here.
  if (dispatching_) return;
  dispatching_ = true;
  while (running_.size() < pool_.capacity()) {
    std::optional<ClientId> client = next_client();
    if (!client) break;
    std::deque<Waiting>& queue = queues_.at(*client);
    Waiting request = std::move(queue.front());
    queue.pop_front();
    last_served_ = *client;
    Ticket ticket = request.ticket;
    Ticket pool_ticket = pool_.submit(
        std::move(request.request), request.timeout,
        [this, alive = std::weak_ptr<bool>(alive_), ticket, handler = std::move(request.handler)](pool::WorkerOutcome outcome) {
          if (alive.expired()) return handler(std::move(outcome));
          running_.erase(ticket);
          owner_.erase(ticket);
          handler(std::move(outcome));
          dispatch();
        });
    running_.emplace(ticket, pool_ticket);
  }
  dispatching_ = false;
}

std::optional<FairScheduler::ClientId> FairScheduler::next_client() {
  // The first client after the last one served (wrapping around) with a request waiting.
  auto start = queues_.upper_bound(last_served_);
  for (auto it = start; it != queues_.end(); ++it)
    if (!it->second.empty()) return it->first;
  for (auto it = queues_.begin(); it != start; ++it)
    if (!it->second.empty()) return it->first;
  return std::nullopt;
}

void FairScheduler::answer_cancelled(pool::RequestPool::Handler handler, const char* why) {
  // Never inside the caller's stack: RequestPool handlers do not run before submit() returns.
  boost::asio::post(io_, [handler = std::move(handler), why] {
    handler(pool::WorkerFault{pool::WorkerFault::Kind::cancelled, {}, why, {}});
  });
}

}  // namespace minifyd::service
