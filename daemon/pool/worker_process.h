// One sandboxed worker process: spawned by process/spawn.h, driven over JSON-lines pipes on an
// Asio io_context. It serves up to concurrency() requests at once (its hello says how many; 1 when
// it does not say), each with a deadline and a handler of its own, replies matched by id. At a
// deadline, a worker of concurrency 1 is killed (SIGTERM -> SIGKILL on its process group); a
// concurrent worker is sent a `cancel` for that request alone, kills the child serving it, and
// serves on. The process is always reaped; how it ended is reported to every request it owed.
#pragma once

#include <sys/types.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>

#include "common/exit_status.h"
#include "daemon/pool/worker_config.h"
#include "protocol/line_buffer.h"
#include "protocol/worker_messages.h"

namespace minifyd::pool {

// Why a worker could not answer. The worker is dead (and reaped) when this is reported, unless
// `worker_survives`: a concurrent worker's timeout or cancel ends that one request, and then `exit`
// and `stderr_tail` do not apply (they stay empty).
struct WorkerFault {
  enum class Kind {
    spawn_failed,    // the executable could not be started
    crashed,         // killed by a signal it did not get from us
    exited,          // exited on its own before answering
    timed_out,       // no answer before the deadline; we killed it (or its request's child)
    protocol_error,  // it wrote something that is not the protocol; we killed it
    cancelled,       // its answer was no longer needed; we killed it (or its request's child)
  };
  Kind kind = Kind::exited;
  ExitStatus exit;
  std::string detail;       // what happened, for logs and errors
  std::string stderr_tail;  // the last bytes it wrote to stderr
  bool worker_survives = false;

  std::string describe() const;
};

// Removes the scratch directories under `root` whose coordinator is dead: a coordinator killed with
// SIGKILL takes its workers along (PR_SET_PDEATHSIG) but cannot clean up after them. Returns how many.
std::size_t remove_orphaned_scratch_dirs(const std::filesystem::path& root);

using WorkerStart = std::variant<protocol::WorkerHello, WorkerFault>;
using WorkerOutcome = std::variant<protocol::WorkerReply, WorkerFault>;

// All methods and handlers run on the io_context's thread. Handlers hold the object alive.
class WorkerProcess : public std::enable_shared_from_this<WorkerProcess> {
 public:
  enum class State { starting, idle, busy, dying, dead };
  using StartHandler = std::function<void(WorkerStart)>;
  using ReplyHandler = std::function<void(WorkerOutcome)>;
  using DeathHandler = std::function<void(const WorkerFault&)>;

  // Spawns the worker; on_start gets its hello, or the fault that stopped it from saying hello.
  static std::shared_ptr<WorkerProcess> start(boost::asio::io_context& io, WorkerConfig config,
                                              StartHandler on_start);
  ~WorkerProcess();

  // Sends one request, which needs a worker that has said hello, has fewer than concurrency()
  // requests in flight and none with this id; on_reply gets the reply, or the fault that ended the
  // request (or the worker) before it replied. A request it cannot take gets a fault at once.
  void request(const protocol::WorkerRequest& request, std::chrono::milliseconds timeout,
               ReplyHandler on_reply);
  // Called when a worker with nothing in flight dies unexpectedly (nobody else would hear of it).
  void on_death(DeathHandler handler) { on_death_ = std::move(handler); }
  // Called when a worker serving in children says a child is ready again, after it said none was
  // (protocol::Readiness): it has room again.
  void on_ready(std::function<void()> handler) { on_ready_ = std::move(handler); }
  // Asks the worker to exit (shutdown request; signals when requests are in flight), escalating to
  // SIGKILL after the grace period; on_exit runs once it is reaped.
  void stop(std::function<void()> on_exit = {});
  // Kills the worker's process group now; every request in flight gets a `cancelled` fault.
  void cancel();
  // Ends one request in flight with a `cancelled` fault: a concurrent worker, or one serving in
  // children, is sent a cancel and serves on; another worker of concurrency 1 is killed, as by
  // cancel(). Unknown ids are ignored.
  void cancel(std::uint64_t request_id);

  // busy while any request is in flight.
  State state() const { return state_; }
  pid_t pid() const { return pid_; }
  const std::optional<protocol::WorkerHello>& hello() const { return hello_; }
  // How many requests it serves at once, from its hello (1 before it).
  std::size_t concurrency() const { return hello_ ? static_cast<std::size_t>(hello_->concurrency) : 1; }
  // Whether each request is served in a forked child whose end never ends the worker (its hello says).
  bool serves_in_children() const { return hello_ && hello_->serves_in_children; }
  std::size_t in_flight() const { return in_flight_.size(); }
  // Whether it takes another request now: it said hello, is not dying, serves fewer than
  // concurrency() requests, and (serving in children) did not say that no child is ready.
  bool has_room() const;

 private:
  // A request sent and not answered yet.
  struct InFlight {
    ReplyHandler on_reply;
    std::unique_ptr<boost::asio::steady_timer> deadline;
    std::uint64_t sequence = 0;  // which line sent it (write()'s count)
  };
  // A request cancelled on a concurrent worker: a reply the worker wrote before it read the cancel
  // may still arrive, and is dropped. The worker reads in order, so once a request sent after the
  // cancel is answered, no such reply can come and the cancel is forgotten.
  struct Cancelled {
    std::uint64_t id = 0;
    std::uint64_t sequence = 0;  // which line cancelled it
  };

  WorkerProcess(boost::asio::io_context& io, WorkerConfig config);
  void spawn(StartHandler on_start);
  void read_stdout();
  void read_stderr();
  void handle_line(const protocol::Line& line);
  void handle_reply(const nlohmann::json& json);
  void handle_readiness(const nlohmann::json& json);
  // Why this worker cannot take request `id` now; nullopt when it can.
  std::optional<std::string> refusal(std::uint64_t id) const;
  // "request 41 is pending", "requests 41, 42 are pending", for protocol errors.
  std::string describe_in_flight() const;
  void on_deadline(std::uint64_t id, std::uint64_t sequence, std::chrono::milliseconds timeout);
  // Ends one request on a concurrent worker: sends it a cancel and gives the request `kind`.
  void end_request(std::uint64_t id, WorkerFault::Kind kind, std::string detail);
  bool forget_cancelled(std::uint64_t id);
  void append_stderr(std::size_t bytes);
  // Queues a line for the worker's stdin; returns its sequence number (1, 2, ...: the order in
  // which the worker reads them).
  std::uint64_t write(std::string line);
  void write_next();
  // Marks the worker broken (first reason wins), signals it as `kind` requires, and reaps it.
  void fail(WorkerFault::Kind kind, std::string detail);
  void signal_group(int signal);
  void poll_reap();
  // Reaped: records how it ended and completes once stderr is drained.
  void finish(ExitStatus status);
  // Closes everything and reports the outcome to whoever waits for it.
  void complete();

  boost::asio::io_context& io_;
  WorkerConfig config_;
  boost::asio::posix::stream_descriptor stdin_;
  boost::asio::posix::stream_descriptor stdout_;
  boost::asio::posix::stream_descriptor stderr_;
  boost::asio::steady_timer hello_deadline_;
  boost::asio::steady_timer reap_timer_;
  pid_t pid_ = -1;
  State state_ = State::starting;
  std::filesystem::path scratch_;
  protocol::LineBuffer lines_;
  std::array<char, 1 << 16> stdout_buffer_{};
  std::array<char, 1 << 12> stderr_buffer_{};
  std::string stderr_tail_;
  std::deque<std::string> outbox_;  // lines not written yet; the front one is being written
  std::uint64_t lines_queued_ = 0;
  std::optional<protocol::WorkerHello> hello_;
  std::map<std::uint64_t, InFlight> in_flight_;
  std::deque<Cancelled> cancelled_;  // in the order the cancels were written
  StartHandler on_start_;
  DeathHandler on_death_;
  std::function<void()> on_ready_;
  std::function<void()> on_exit_;
  // What its last readiness line said (a hello comes once a child is ready); false from a cancel to the
  // readiness line that answers it.
  bool child_ready_ = true;
  std::optional<WorkerFault> fault_;
  bool stopping_ = false;
  bool stderr_closed_ = false;
  std::optional<ExitStatus> exit_;  // set once reaped
  std::chrono::steady_clock::time_point dying_since_;
};

}  // namespace minifyd::pool
