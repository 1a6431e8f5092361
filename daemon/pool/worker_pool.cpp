// Slot bookkeeping, dispatch and replacement of workers.
#include "daemon/pool/worker_pool.h"

#include <algorithm>

#include <boost/asio/post.hpp>

#include "common/log.h"

namespace minifyd::pool {
namespace {

void set_id(protocol::WorkerRequest& request, std::uint64_t id) {
  std::visit([id](auto& r) { r.id = id; }, request);
}

// Why the worker that sent `reply` serves nothing more, if it does not: after a CUDA error its CUDA
// context is poisoned; a worker announcing its retirement exits after this reply.
enum class Retirement { none, cuda_error, announced };

Retirement retirement_of(const protocol::WorkerReply& reply) {
  const protocol::Verdict* failure = protocol::compiled_failure_of(reply);
  if (failure != nullptr && failure->kind == protocol::FailureKind::cuda_error) return Retirement::cuda_error;
  return protocol::announces_retirement(reply) ? Retirement::announced : Retirement::none;
}

WorkerFault cancelled_fault(const std::string& detail) {
  return WorkerFault{WorkerFault::Kind::cancelled, {}, detail, {}};
}

// ": " and the last line of text, or nothing when it is blank.
std::string last_line_of(const std::string& text) {
  std::size_t end = text.find_last_not_of(" \n\r\t");
  if (end == std::string::npos) return "";
  std::size_t newline = text.rfind('\n', end);
  std::size_t start = newline == std::string::npos ? 0 : newline + 1;
  return ": " + text.substr(start, end + 1 - start);
}

}  // namespace

WorkerPool::WorkerPool(boost::asio::io_context& io, PoolConfig config) : io_(io), config_(std::move(config)) {
  for (const PoolSlot& slot : config_.slots) slots_.push_back(Slot{slot, nullptr, nullptr, false, false, {}, 0, {}, false});
}

WorkerPool::~WorkerPool() { *alive_ = false; }

void WorkerPool::start() {
  if (std::size_t removed = remove_orphaned_scratch_dirs(config_.worker.scratch_root))
    log::info("removed " + std::to_string(removed) + " scratch directories of workers whose coordinator died");
  // Spares come later (want_spare): starting them with the active workers would have every load of
  // LibTorch share the cores with the ones the first query waits for.
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    bool led = false;
    for (std::size_t first = 0; first < i && !led; ++first) led = shares(first, i);
    if (led) slots_[i].awaiting_shared = true;
    else launch(i, false);
  }
}

bool WorkerPool::shares(std::size_t a, std::size_t b) const {
  return config_.share_concurrent_workers && slots_[a].config.cuda_visible_devices == slots_[b].config.cuda_visible_devices;
}

void WorkerPool::offer_to_awaiting(std::size_t slot_index, const std::shared_ptr<WorkerProcess>& worker) {
  for (std::size_t k = 0; k < slots_.size(); ++k) {
    Slot& other = slots_[k];
    if (k == slot_index || !other.awaiting_shared || !shares(k, slot_index)) continue;
    other.awaiting_shared = false;
    if (worker->concurrency() > 1) {
      other.active = worker;
      other.active_ready = true;
      tell(PoolEvent::of_worker(PoolEvent::Kind::worker_ready, k, worker->pid()));
    } else {
      launch(k, false);
    }
  }
}

std::vector<std::size_t> WorkerPool::drop_active(const std::shared_ptr<WorkerProcess>& worker) {
  std::vector<std::size_t> dropped;
  for (std::size_t k = 0; k < slots_.size(); ++k) {
    if (!worker || slots_[k].active != worker) continue;
    slots_[k].active = nullptr;
    slots_[k].active_ready = false;
    dropped.push_back(k);
  }
  return dropped;
}

void WorkerPool::want_spare(std::size_t slot_index) {
  Slot& slot = slots_[slot_index];
  if (!config_.warm_spares || stopping_ || slot.spare || !slot.active || !slot.active_ready) return;
  // A concurrent worker (a fork server), or one serving in children, outlives the crashes, cancels and
  // CUDA errors of its requests, each in its own child: a spare would only cost its start-up.
  if (slot.active->concurrency() > 1 || slot.active->serves_in_children()) return;
  launch(slot_index, true);
}

void WorkerPool::launch(std::size_t slot_index, bool as_spare) {
  if (stopping_) return;
  Slot& slot = slots_[slot_index];
  WorkerConfig worker_config = config_.worker;
  if (slot.config.cuda_visible_devices) worker_config.cuda_visible_devices = slot.config.cuda_visible_devices;
  auto holder = std::make_shared<std::shared_ptr<WorkerProcess>>();
  auto worker = WorkerProcess::start(io_, std::move(worker_config),
                                     [this, alive = std::weak_ptr<bool>(alive_), slot_index, holder](WorkerStart start) {
                                       if (alive.expired()) return;
                                       on_started(slot_index, *holder, std::move(start));
                                     });
  *holder = worker;
  ++stats_.workers_started;
  tell(PoolEvent::of_worker(PoolEvent::Kind::worker_launched, slot_index, worker->pid(), as_spare));
  (as_spare ? slot.spare : slot.active) = worker;
  (as_spare ? slot.spare_ready : slot.active_ready) = false;
}

void WorkerPool::on_started(std::size_t slot_index, const std::shared_ptr<WorkerProcess>& worker, WorkerStart start) {
  Slot& slot = slots_[slot_index];
  bool is_active = slot.active == worker;
  bool is_spare = slot.spare == worker;
  if (auto* fault = std::get_if<WorkerFault>(&start)) {
    if (is_active) slot.active = nullptr;
    if (is_spare) slot.spare = nullptr;
    if (stopping_) return check_stopped();
    tell(PoolEvent::of_worker(PoolEvent::Kind::worker_start_failed, slot_index, worker ? worker->pid() : 0));
    ++slot.start_failures;
    log::warn("slot " + std::to_string(slot_index) + ": " + fault->describe() +
              (fault->stderr_tail.empty() ? "" : "\n" + fault->stderr_tail));
    // What a worker says last before dying at start names the cause (a python without torch, a
    // missing library): it goes into the error the pool's requests get.
    slot.last_start_error = fault->describe() + last_line_of(fault->stderr_tail);
    for (std::size_t k = 0; k < slots_.size(); ++k)  // they wait for the worker that failed to start
      if (slots_[k].awaiting_shared && shares(k, slot_index)) {
        slots_[k].start_failures = slot.start_failures;
        slots_[k].last_start_error = slot.last_start_error;
      }
    if (slot.start_failures < config_.max_start_failures) {
      if (is_active) replace_active(slot_index);
      else if (is_spare) want_spare(slot_index);
    }
    return fail_queue_if_hopeless();
  }
  if (stopping_ || (!is_active && !is_spare)) {
    return retire(worker);
  }
  slot.start_failures = 0;
  tell(PoolEvent::of_worker(PoolEvent::Kind::worker_ready, slot_index, worker->pid()));
  worker->on_death([this, alive = std::weak_ptr<bool>(alive_), slot_index, weak = std::weak_ptr<WorkerProcess>(worker)](
                       const WorkerFault& fault) {
    if (alive.expired()) return;
    Slot& s = slots_[slot_index];
    auto dead = weak.lock();
    log::warn("slot " + std::to_string(slot_index) + ": idle " + fault.describe());
    if (dead && s.spare == dead) {
      s.spare = nullptr;
      want_spare(slot_index);
    }
    for (std::size_t k : drop_active(dead)) replace_active(k);
  });
  // A worker serving in children that said none was ready takes requests again.
  worker->on_ready([this, alive = std::weak_ptr<bool>(alive_)] {
    if (!alive.expired()) dispatch();
  });
  (is_active ? slot.active_ready : slot.spare_ready) = true;
  if (is_active) {
    want_spare(slot_index);
    offer_to_awaiting(slot_index, worker);
  }
  dispatch();
}

void WorkerPool::replace_active(std::size_t slot_index) {
  Slot& slot = slots_[slot_index];
  if (slot.spare) {
    slot.active = std::move(slot.spare);
    slot.active_ready = slot.spare_ready;
    slot.spare = nullptr;
    slot.spare_ready = false;
    want_spare(slot_index);
    return;
  }
  // A worker of the group, up and concurrent, is taken; one starting is waited for.
  for (std::size_t k = 0; k < slots_.size(); ++k) {
    const Slot& other = slots_[k];
    if (k == slot_index || !shares(k, slot_index) || !other.active) continue;
    if (other.active->state() == WorkerProcess::State::dying || other.active->state() == WorkerProcess::State::dead)
      continue;
    if (!other.active_ready) {
      slot.awaiting_shared = true;
      return;
    }
    if (other.active->concurrency() > 1) {
      slot.active = other.active;
      slot.active_ready = true;
      tell(PoolEvent::of_worker(PoolEvent::Kind::worker_ready, slot_index, slot.active->pid()));
      return;
    }
  }
  launch(slot_index, false);
}

WorkerPool::Ticket WorkerPool::submit(protocol::WorkerRequest request, std::chrono::milliseconds timeout,
                                      Handler handler) {
  Ticket ticket = next_ticket_++;
  set_id(request, ticket);
  ++stats_.requests;
  if (stopping_) {
    boost::asio::post(io_, [handler = std::move(handler)] { handler(cancelled_fault("the pool is stopping")); });
    return ticket;
  }
  queue_.push_back(Submission{ticket, std::move(request), timeout, std::move(handler)});
  fail_queue_if_hopeless();
  dispatch();
  return ticket;
}

void WorkerPool::dispatch() {
  for (std::size_t i = 0; i < slots_.size() && !queue_.empty(); ++i) {
    Slot& slot = slots_[i];
    // A dying worker is sent nothing: its requests' faults are on their way, and replace it.
    if (!slot.active || !slot.active_ready || slot.running || !slot.active->has_room()) continue;
    Submission submission = std::move(queue_.front());
    queue_.pop_front();
    send(i, std::move(submission));
  }
}

void WorkerPool::send(std::size_t slot_index, Submission submission) {
  Slot& slot = slots_[slot_index];
  Ticket ticket = submission.ticket;
  slot.running = ticket;
  Dispatched& sent = in_flight_[ticket];
  sent.submission = std::move(submission);
  sent.slot_index = slot_index;
  sent.worker = slot.active;
  sent.sent_at = std::chrono::steady_clock::now();
  tell(PoolEvent::sent(slot_index, sent.worker->pid(), ticket, sent.submission.request));
  if (config_.park_after && sent.worker->concurrency() > 1) {
    sent.park_timer = std::make_unique<boost::asio::steady_timer>(io_, *config_.park_after);
    sent.park_timer->async_wait(
        [this, alive = std::weak_ptr<bool>(alive_), slot_index](const boost::system::error_code& ec) {
          if (!ec && !alive.expired()) park_if_due(slot_index);
        });
  }
  sent.worker->request(sent.submission.request, sent.submission.timeout,
                       [this, alive = std::weak_ptr<bool>(alive_), ticket](WorkerOutcome outcome) {
                         if (!alive.expired()) on_outcome(ticket, std::move(outcome));
                       });
}

void WorkerPool::park_if_due(std::size_t slot_index) {
  Slot& slot = slots_[slot_index];
  if (!config_.park_after || !slot.running || stopping_) return;
  Dispatched& running = in_flight_.at(*slot.running);
  const WorkerProcess& worker = *running.worker;
  if (std::chrono::steady_clock::now() - running.sent_at < *config_.park_after) return;
  // One place stays for the request the slot sends next.
  if (parked_on(worker) + 1 >= worker.concurrency()) return;
  running.parked = true;
  ++stats_.parked;
  slot.running.reset();
  log::debug("slot " + std::to_string(slot_index) + ": request " + std::to_string(running.submission.ticket) +
             " parked on worker " + std::to_string(worker.pid()));
  dispatch();
}

std::size_t WorkerPool::parked_on(const WorkerProcess& worker) const {
  return static_cast<std::size_t>(std::count_if(in_flight_.begin(), in_flight_.end(), [&](const auto& entry) {
    return entry.second.parked && entry.second.worker.get() == &worker;
  }));
}

std::size_t WorkerPool::parked() const {
  return static_cast<std::size_t>(
      std::count_if(in_flight_.begin(), in_flight_.end(), [](const auto& entry) { return entry.second.parked; }));
}

void WorkerPool::count_fault(const WorkerFault& fault) {
  switch (fault.kind) {
    case WorkerFault::Kind::crashed:
    case WorkerFault::Kind::exited: ++stats_.crashes_contained; break;
    case WorkerFault::Kind::timed_out: ++stats_.timeouts; break;
    case WorkerFault::Kind::protocol_error: ++stats_.protocol_errors; break;
    case WorkerFault::Kind::cancelled: ++stats_.cancelled; break;
    case WorkerFault::Kind::spawn_failed: break;
  }
}

void WorkerPool::on_outcome(Ticket ticket, WorkerOutcome outcome) {
  auto answered = in_flight_.find(ticket);
  if (answered == in_flight_.end()) return;
  Dispatched done = std::move(answered->second);
  in_flight_.erase(answered);
  Slot& slot = slots_[done.slot_index];
  if (slot.running == ticket) slot.running.reset();
  // A dead worker owed all its requests a fault: the first of them replaces it, once.
  bool on_active = slot.active == done.worker;
  std::vector<std::size_t> replaced;  // slots whose active worker this outcome ended
  if (auto* fault = std::get_if<WorkerFault>(&outcome)) {
    count_fault(*fault);
    // A worker killed at a request's time limit writes its stacks first (worker_main.py): where it hung.
    bool hung = fault->kind == WorkerFault::Kind::timed_out && !fault->stderr_tail.empty();
    log::debug("slot " + std::to_string(done.slot_index) + ": " + fault->describe() +
               (hung ? "\nits stderr:\n" + fault->stderr_tail : ""));
    if (!fault->worker_survives && on_active) replaced = drop_active(done.worker);
  } else if (Retirement why = retirement_of(std::get<protocol::WorkerReply>(outcome)); why != Retirement::none) {
    bool cuda_error = why == Retirement::cuda_error;
    if (cuda_error) ++stats_.retired_after_cuda_error;
    // On a concurrent worker a CUDA error was a forked child's, gone already; the fork server never
    // initialises CUDA; nor does the worker serving in children (its serving child is gone).
    bool contained = cuda_error && done.worker->serves_in_children() &&
                     !protocol::announces_retirement(std::get<protocol::WorkerReply>(outcome));
    if (done.worker->concurrency() == 1 && on_active && !contained) {
      log::info("slot " + std::to_string(done.slot_index) + ": worker " + std::to_string(slot.active->pid()) +
                (cuda_error ? " retired after a CUDA error" : " retired, as it announced"));
      retire(slot.active);
      replaced = drop_active(done.worker);
    }
  }
  tell(PoolEvent::answered(done.slot_index, done.worker->pid(), ticket, outcome));
  // The handler first: if it stops the pool, no replacement is started in vain.
  done.submission.handler(std::move(outcome));
  if (stopping_) return check_stopped();
  for (std::size_t k : replaced) replace_active(k);
  park_if_due(done.slot_index);  // a parked request's end leaves room for another
  dispatch();
}

bool WorkerPool::cancel_queued(Ticket ticket) {
  for (auto it = queue_.begin(); it != queue_.end(); ++it) {
    if (it->ticket != ticket) continue;
    Handler handler = std::move(it->handler);
    queue_.erase(it);
    ++stats_.cancelled;
    boost::asio::post(io_, [handler = std::move(handler)] { handler(cancelled_fault("cancelled while queued")); });
    return true;
  }
  return false;
}

void WorkerPool::cancel(Ticket ticket) {
  if (cancel_queued(ticket)) return;
  if (auto sent = in_flight_.find(ticket); sent != in_flight_.end()) sent->second.worker->cancel(ticket);
}

void WorkerPool::fail_queue_if_hopeless() {
  for (const Slot& slot : slots_)
    if (slot.start_failures < config_.max_start_failures) return;
  std::string reason = "no worker could be started: " + (slots_.empty() ? "the pool has no slots" : slots_.front().last_start_error);
  while (!queue_.empty()) {
    Submission submission = std::move(queue_.front());
    queue_.pop_front();
    boost::asio::post(io_, [handler = std::move(submission.handler), reason] {
      handler(WorkerFault{WorkerFault::Kind::spawn_failed, {}, reason, {}});
    });
  }
}

void WorkerPool::stop(std::function<void()> on_stopped) {
  stopping_ = true;
  on_stopped_ = std::move(on_stopped);
  while (!queue_.empty()) {
    Submission submission = std::move(queue_.front());
    queue_.pop_front();
    boost::asio::post(io_, [handler = std::move(submission.handler)] { handler(cancelled_fault("the pool is stopping")); });
  }
  for (Slot& slot : slots_) {
    for (auto* worker : {&slot.active, &slot.spare}) {
      if (!*worker) continue;
      // A shared worker is retired once, by the first slot holding it.
      if (std::find(retiring_.begin(), retiring_.end(), *worker) == retiring_.end()) retire(*worker);
      *worker = nullptr;
    }
  }
  check_stopped();
}

void WorkerPool::retire(const std::shared_ptr<WorkerProcess>& worker) {
  // A long-running pool retires workers again and again: keep only those not reaped yet.
  retiring_.erase(std::remove_if(retiring_.begin(), retiring_.end(),
                                 [](const auto& old) { return old->state() == WorkerProcess::State::dead; }),
                  retiring_.end());
  retiring_.push_back(worker);
  tell(PoolEvent::of_worker(PoolEvent::Kind::worker_retired, 0, worker->pid()));
  worker->stop([this, alive = std::weak_ptr<bool>(alive_)] {
    if (!alive.expired()) check_stopped();
  });
}

void WorkerPool::check_stopped() {
  if (!stopping_ || !on_stopped_ || !in_flight_.empty()) return;
  for (const auto& worker : retiring_)
    if (worker->state() != WorkerProcess::State::dead) return;
  auto done = std::move(on_stopped_);
  on_stopped_ = nullptr;
  retiring_.clear();
  boost::asio::post(io_, std::move(done));
}

void WorkerPool::tell(const PoolEvent& event) const {
  if (config_.on_event) config_.on_event(event);
}

std::vector<protocol::WorkerHello> WorkerPool::hellos() const {
  std::vector<protocol::WorkerHello> result;
  std::vector<const WorkerProcess*> seen;  // a shared worker is one worker
  for (const Slot& slot : slots_) {
    if (!slot.active || !slot.active_ready || !slot.active->hello()) continue;
    if (std::find(seen.begin(), seen.end(), slot.active.get()) != seen.end()) continue;
    seen.push_back(slot.active.get());
    result.push_back(*slot.active->hello());
  }
  return result;
}

}  // namespace minifyd::pool
