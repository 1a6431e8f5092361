// A pool of sandboxed workers, one active worker per slot (a slot pins CUDA_VISIBLE_DEVICES),
// each serving one request at a time with an optional warm spare, started once the active worker is
// up, so that a crash costs no start-up time; with share_concurrent_workers, slots of the same devices
// share one worker that serves several requests at once. Requests wait in one
// FIFO queue and run on the next free slot; a worker that crashes, hangs or breaks the protocol
// is replaced. On a concurrent worker (concurrency() > 1), a request running longer than
// `park_after` is parked: it runs on, but no longer holds its slot, whose next request goes to the
// same worker beside it; a timeout or cancel there ends that request alone and the worker serves
// on. All methods and handlers run on the io_context's thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "daemon/pool/pool_event.h"
#include "daemon/pool/request_pool.h"
#include "daemon/pool/worker_process.h"

namespace minifyd::pool {

struct PoolSlot {
  std::optional<std::string> cuda_visible_devices;  // nullopt: the worker config's (by default, unset)
};

struct PoolConfig {
  WorkerConfig worker;
  std::vector<PoolSlot> slots{PoolSlot{}};
  bool warm_spares = true;
  // Slots of the same devices share one worker when it serves several requests at once (a fork
  // server): one start (an `import torch` and Inductor's warm-up, seconds of CPU; a load of LibTorch)
  // instead of one per slot. The first slot of each such group starts a worker and the others wait for
  // its hello; a worker of concurrency 1 gets them workers of their own then, so this is for workers
  // known to fork (the GPUs hidden from them).
  bool share_concurrent_workers = false;
  // A slot whose workers fail to start this many times in a row gives up, failing its requests.
  int max_start_failures = 3;
  // A request running this long on a concurrent worker is parked (nullopt: never). At most
  // concurrency() - 1 are parked per worker; beyond that the slot waits for its request.
  std::optional<std::chrono::milliseconds> park_after;
  // Told what the pool does, as it does it (a run's timeline); none when empty.
  PoolEventSink on_event;
};

struct PoolStats {
  std::uint64_t requests = 0;
  std::uint64_t workers_started = 0;
  std::uint64_t crashes_contained = 0;  // workers that died by a signal or exited mid-request
  std::uint64_t timeouts = 0;  // on a concurrent worker, only the request's child was killed
  std::uint64_t protocol_errors = 0;
  std::uint64_t cancelled = 0;
  // Workers never used again after reporting one; on a concurrent worker, the child that served it
  // (the fork server itself never touches CUDA).
  std::uint64_t retired_after_cuda_error = 0;
  std::uint64_t parked = 0;  // requests ever parked
};

class WorkerPool final : public RequestPool {
 public:

  WorkerPool(boost::asio::io_context& io, PoolConfig config);
  ~WorkerPool() override;
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Starts the active workers. Requests submitted before they are ready wait.
  void start();
  // RequestPool; the pool sets each request's id. cancel_queued() knows exactly whether a
  // request is still queued.
  Ticket submit(protocol::WorkerRequest request, std::chrono::milliseconds timeout, Handler handler) override;
  void cancel(Ticket ticket) override;
  bool cancel_queued(Ticket ticket) override;
  // Slots, i.e. how many requests run at once besides the parked ones.
  std::size_t capacity() const { return slots_.size(); }
  // Stops every worker; queued requests get a `cancelled` fault. on_stopped runs when all are reaped.
  void stop(std::function<void()> on_stopped);

  const PoolStats& stats() const { return stats_; }
  std::size_t queued() const { return queue_.size(); }
  // Requests parked now.
  std::size_t parked() const;
  // Hellos of the active workers that are up, for `stats` and GPU pinning checks.
  std::vector<protocol::WorkerHello> hellos() const;

 private:
  // A request as submit() took it: queued until a slot is free, then held by its Dispatched.
  struct Submission {
    Ticket ticket;
    protocol::WorkerRequest request;
    std::chrono::milliseconds timeout;
    Handler handler;
  };
  // A request sent to a worker and not answered yet.
  struct Dispatched {
    Submission submission;
    std::size_t slot_index = 0;
    std::shared_ptr<WorkerProcess> worker;
    std::chrono::steady_clock::time_point sent_at;
    bool parked = false;
    std::unique_ptr<boost::asio::steady_timer> park_timer;
  };
  struct Slot {
    PoolSlot config;
    std::shared_ptr<WorkerProcess> active;
    std::shared_ptr<WorkerProcess> spare;
    bool active_ready = false;
    bool spare_ready = false;
    std::optional<Ticket> running;  // the request holding the slot (parked ones do not)
    int start_failures = 0;
    std::string last_start_error;
    bool awaiting_shared = false;  // waits for the hello of a worker another slot of its group starts
  };

  void launch(std::size_t slot_index, bool as_spare);
  // Launches the slot's spare if it has none and its active worker, up, serves one request at a time.
  void want_spare(std::size_t slot_index);
  void on_started(std::size_t slot_index, const std::shared_ptr<WorkerProcess>& worker, WorkerStart start);
  void replace_active(std::size_t slot_index);
  // Whether slots a and b share a worker when it is concurrent (share_concurrent_workers).
  bool shares(std::size_t a, std::size_t b) const;
  // The slots waiting for the hello of slot_index's new active worker get it if it is concurrent, else
  // workers of their own.
  void offer_to_awaiting(std::size_t slot_index, const std::shared_ptr<WorkerProcess>& worker);
  // Drops a worker that serves nothing more from every slot holding it as active: those slots.
  std::vector<std::size_t> drop_active(const std::shared_ptr<WorkerProcess>& worker);
  void dispatch();
  void send(std::size_t slot_index, Submission submission);
  // Parks the slot's running request if it has run for park_after and its worker has room.
  void park_if_due(std::size_t slot_index);
  std::size_t parked_on(const WorkerProcess& worker) const;
  void on_outcome(Ticket ticket, WorkerOutcome outcome);
  void count_fault(const WorkerFault& fault);
  void fail_queue_if_hopeless();
  // Stops a worker that serves nothing more, keeping it until it is reaped.
  void retire(const std::shared_ptr<WorkerProcess>& worker);
  void check_stopped();
  void tell(const PoolEvent& event) const;

  boost::asio::io_context& io_;
  PoolConfig config_;
  std::vector<Slot> slots_;
  std::deque<Submission> queue_;
  std::map<Ticket, Dispatched> in_flight_;
  Ticket next_ticket_ = 1;
  PoolStats stats_;
  bool stopping_ = false;
  std::function<void()> on_stopped_;
  // Workers being stopped, kept alive until reaped.
  std::vector<std::shared_ptr<WorkerProcess>> retiring_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace minifyd::pool
