// Crossing between a job's thread and the daemon's io thread.
#include "daemon/service/shared_pool_client.h"

#include <future>
#include <map>
#include <mutex>

#include <boost/asio/post.hpp>

namespace minifyd::service {

// What both threads reach. `tickets` (ours -> the scheduler's) is touched only on the daemon's
// thread; `job_io` under `mutex`, so that an answer is never posted to a job's io_context after the
// client is gone.
struct SharedPoolClient::Shared {
  Shared(FairScheduler& shared_scheduler, FairScheduler::ClientId id, boost::asio::io_context* io)
      : scheduler(shared_scheduler), client(id), job_io(io) {}

  FairScheduler& scheduler;
  FairScheduler::ClientId client;
  std::map<Ticket, FairScheduler::Ticket> tickets;
  std::mutex mutex;
  boost::asio::io_context* job_io;
};

SharedPoolClient::SharedPoolClient(boost::asio::io_context& daemon_io, FairScheduler& scheduler,
                                   std::size_t parallelism)
    : daemon_io_(daemon_io),
      keep_running_(boost::asio::make_work_guard(io_)),
      parallelism_(std::max<std::size_t>(parallelism, 1)) {
  // add_client() is a plain counter bump, but the scheduler belongs to the daemon's thread.
  auto registered = std::make_shared<std::promise<FairScheduler::ClientId>>();
  std::future<FairScheduler::ClientId> client = registered->get_future();
  boost::asio::post(daemon_io_, [&scheduler, registered] { registered->set_value(scheduler.add_client()); });
  shared_ = std::make_shared<Shared>(scheduler, client.get(), &io_);
}

SharedPoolClient::~SharedPoolClient() {
  {
    std::lock_guard<std::mutex> lock(shared_->mutex);
    shared_->job_io = nullptr;
  }
  boost::asio::post(daemon_io_, [shared = shared_] { shared->scheduler.remove_client(shared->client); });
}

pool::RequestPool::Ticket SharedPoolClient::submit(protocol::WorkerRequest request, std::chrono::milliseconds timeout,
                                             Handler handler) {
  Ticket ticket = next_ticket_++;
  boost::asio::post(daemon_io_, [shared = shared_, ticket, request = std::move(request), timeout,
                                 handler = std::move(handler)]() mutable {
    auto answer = [shared, ticket, handler = std::move(handler)](pool::WorkerOutcome outcome) {
      shared->tickets.erase(ticket);
      std::lock_guard<std::mutex> lock(shared->mutex);
      if (shared->job_io != nullptr)
        boost::asio::post(*shared->job_io, [handler, outcome = std::move(outcome)] { handler(outcome); });
    };
    FairScheduler::Ticket scheduled =
        shared->scheduler.submit(shared->client, std::move(request), timeout, std::move(answer));
    // The scheduler never answers inside submit(), so the ticket is still live here.
    shared->tickets.emplace(ticket, scheduled);
  });
  return ticket;
}

void SharedPoolClient::cancel(Ticket ticket) {
  boost::asio::post(daemon_io_, [shared = shared_, ticket] {
    if (auto it = shared->tickets.find(ticket); it != shared->tickets.end()) shared->scheduler.cancel(it->second);
  });
}

bool SharedPoolClient::cancel_queued(Ticket ticket) {
  boost::asio::post(daemon_io_, [shared = shared_, ticket] {
    if (auto it = shared->tickets.find(ticket); it != shared->tickets.end())
      shared->scheduler.cancel_queued(it->second);
  });
  return false;
}

}  // namespace minifyd::service
