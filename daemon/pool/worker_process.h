// One sandboxed worker process: spawned with Boost.Process, driven over JSON-lines pipes on an
// Asio io_context, one request at a time, with a per-request deadline that escalates SIGTERM ->
// SIGKILL on the worker's process group. The process is always reaped; how it ended is reported.
#pragma once

#include <sys/types.h>

#include <array>
#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <variant>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/process/async_pipe.hpp>

#include "common/exit_status.h"
#include "daemon/pool/worker_config.h"
#include "protocol/line_buffer.h"
#include "protocol/worker_messages.h"

namespace minifyd {

// Why a worker could not answer. It is dead (and reaped) when this is reported.
struct WorkerFault {
  enum class Kind {
    spawn_failed,    // the executable could not be started
    crashed,         // killed by a signal it did not get from us
    exited,          // exited on its own before answering
    timed_out,       // no answer before the deadline; we killed it
    protocol_error,  // it wrote something that is not the protocol; we killed it
    cancelled,       // its answer was no longer needed; we killed it
  };
  Kind kind = Kind::exited;
  ExitStatus exit;
  std::string detail;       // what happened, for logs and errors
  std::string stderr_tail;  // the last bytes it wrote to stderr

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

  // Sends one request (the worker must be idle); on_reply gets the reply, or the fault that
  // ended the worker before it replied.
  void request(const protocol::WorkerRequest& request, std::chrono::milliseconds timeout,
               ReplyHandler on_reply);
  // Called when an idle worker dies unexpectedly (nobody else would hear of it).
  void on_death(DeathHandler handler) { on_death_ = std::move(handler); }
  // Asks the worker to exit (shutdown request), escalating to signals after the grace period;
  // on_exit runs once it is reaped.
  void stop(std::function<void()> on_exit = {});
  // Kills the worker's process group now; a request in flight gets a `cancelled` fault.
  void cancel();

  State state() const { return state_; }
  pid_t pid() const { return pid_; }
  const std::optional<protocol::WorkerHello>& hello() const { return hello_; }

 private:
  WorkerProcess(boost::asio::io_context& io, WorkerConfig config);
  void spawn(StartHandler on_start);
  void read_stdout();
  void read_stderr();
  void handle_line(const protocol::Line& line);
  void append_stderr(std::size_t bytes);
  void write(const std::string& line);
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
  boost::process::async_pipe stdin_;
  boost::process::async_pipe stdout_;
  boost::process::async_pipe stderr_;
  boost::asio::steady_timer deadline_;
  boost::asio::steady_timer reap_timer_;
  pid_t pid_ = -1;
  State state_ = State::starting;
  std::filesystem::path scratch_;
  protocol::LineBuffer lines_;
  std::array<char, 1 << 16> stdout_buffer_{};
  std::array<char, 1 << 12> stderr_buffer_{};
  std::string stderr_tail_;
  std::string write_buffer_;
  std::optional<protocol::WorkerHello> hello_;
  std::uint64_t pending_id_ = 0;
  StartHandler on_start_;
  ReplyHandler on_reply_;
  DeathHandler on_death_;
  std::function<void()> on_exit_;
  std::optional<WorkerFault> fault_;
  bool stopping_ = false;
  bool stderr_closed_ = false;
  std::optional<ExitStatus> exit_;  // set once reaped
  std::chrono::steady_clock::time_point dying_since_;
};

}  // namespace minifyd
