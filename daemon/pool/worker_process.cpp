// Spawning, driving and reaping one worker process.
#include "daemon/pool/worker_process.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>

#include "common/file_util.h"
#include "common/json_view.h"
#include "common/log.h"
#include "daemon/process/spawn.h"

namespace minifyd::pool {
namespace {

namespace asio = boost::asio;

// The variables of the coordinator's environment the worker may have, and its slot's GPUs.
std::vector<std::string> sandbox_environment(const WorkerConfig& config) {
  std::vector<std::string> environment;
  for (const std::string& name : config.environment_allowlist)
    if (name != "CUDA_VISIBLE_DEVICES" || !config.cuda_visible_devices)
      if (const char* value = std::getenv(name.c_str())) environment.push_back(name + "=" + value);
  if (config.cuda_visible_devices) environment.push_back("CUDA_VISIBLE_DEVICES=" + *config.cuda_visible_devices);
  return environment;
}

constexpr std::string_view scratch_prefix = "minify-worker-";

// Named after the coordinator, so that a later one can tell the directories of a dead one.
Expected<std::filesystem::path> make_scratch_dir(const std::filesystem::path& root) {
  return create_unique_directory(root, std::string(scratch_prefix) + std::to_string(::getpid()) + "-");
}

}  // namespace

std::size_t remove_orphaned_scratch_dirs(const std::filesystem::path& root) {
  std::error_code error;
  std::size_t removed = 0;
  for (std::filesystem::directory_iterator it(root, error), end; !error && it != end; it.increment(error)) {
    std::string name = it->path().filename().string();
    if (name.rfind(scratch_prefix, 0) != 0) continue;
    std::size_t digits_end = name.find('-', scratch_prefix.size());
    if (digits_end == std::string::npos || digits_end == scratch_prefix.size()) continue;
    std::string digits = name.substr(scratch_prefix.size(), digits_end - scratch_prefix.size());
    if (digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 9) continue;
    pid_t owner = static_cast<pid_t>(std::stol(digits));
    if (::kill(owner, 0) == 0 || errno != ESRCH) continue;  // alive, or not ours to judge
    std::error_code ignored;
    if (std::filesystem::remove_all(it->path(), ignored) > 0) ++removed;
  }
  return removed;
}

std::string WorkerFault::describe() const {
  static constexpr const char* names[] = {"could not start", "crashed", "exited", "timed out",
                                          "broke the protocol", "was cancelled"};
  std::string text = std::string("worker ") + names[static_cast<int>(kind)];
  if (!detail.empty()) text += ": " + detail;
  if (kind != Kind::spawn_failed && !worker_survives) text += " (" + minifyd::describe(exit) + ")";
  return text;
}

WorkerProcess::WorkerProcess(asio::io_context& io, WorkerConfig config)
    : io_(io),
      config_(std::move(config)),
      stdin_(io),
      stdout_(io),
      stderr_(io),
      hello_deadline_(io),
      reap_timer_(io),
      lines_(config_.max_line_bytes) {}

WorkerProcess::~WorkerProcess() {
  // Always reap: a worker outliving its object would be an unsupervised process.
  if (pid_ > 0 && !exit_) {
    process::signal_group(pid_, SIGKILL);
    ::kill(pid_, SIGKILL);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {}
  }
  if (!scratch_.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(scratch_, ignored);
  }
}

std::shared_ptr<WorkerProcess> WorkerProcess::start(asio::io_context& io, WorkerConfig config,
                                                    StartHandler on_start) {
  std::shared_ptr<WorkerProcess> worker(new WorkerProcess(io, std::move(config)));
  worker->spawn(std::move(on_start));
  return worker;
}

void WorkerProcess::spawn(StartHandler on_start) {
  on_start_ = std::move(on_start);
  auto fail_to_spawn = [&](const std::string& detail) {
    state_ = State::dead;
    WorkerFault fault{WorkerFault::Kind::spawn_failed, {}, detail, {}};
    asio::post(io_, [self = shared_from_this(), fault] { self->on_start_(fault); });
  };
  auto scratch = make_scratch_dir(config_.scratch_root);
  if (!scratch) return fail_to_spawn(scratch.error().message);
  scratch_ = *scratch;

  auto in = process::open_pipe();
  if (!in) return fail_to_spawn(in.error().message);
  auto out = process::open_pipe();
  if (!out) return fail_to_spawn(out.error().message);
  auto err = process::open_pipe();
  if (!err) return fail_to_spawn(err.error().message);
  // Absolute, because the child starts in its scratch directory.
  std::string executable = std::filesystem::absolute(config_.executable).string();
  process::SpawnRequest request{executable,   config_.arguments, sandbox_environment(config_), scratch_,
                                in->read.fd,  out->write.fd,     err->write.fd,                config_.limits};
  auto spawned = process::spawn(request);
  if (!spawned) return fail_to_spawn(spawned.error().message);
  pid_ = *spawned;
  // The coordinator's ends; the child's close with their pipes here.
  stdin_.assign(std::exchange(in->write.fd, -1));
  stdout_.assign(std::exchange(out->read.fd, -1));
  stderr_.assign(std::exchange(err->read.fd, -1));
  log::debug("worker " + std::to_string(pid_) + " started: " + config_.executable.string());

  hello_deadline_.expires_after(config_.hello_timeout);
  hello_deadline_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
    if (!ec && self->state_ == State::starting) self->fail(WorkerFault::Kind::timed_out, "no hello");
  });
  read_stdout();
  read_stderr();
}

void WorkerProcess::read_stdout() {
  stdout_.async_read_some(asio::buffer(stdout_buffer_), [self = shared_from_this()](
                                                            const boost::system::error_code& ec, std::size_t n) {
    if (n > 0) {
      self->lines_.feed(std::string_view(self->stdout_buffer_.data(), n));
      while (self->fault_ == std::nullopt) {
        auto line = self->lines_.next();
        if (!line) break;
        self->handle_line(*line);
      }
    }
    if (ec) {
      std::size_t pending = self->lines_.pending_bytes();
      self->fail(WorkerFault::Kind::exited,
                 pending > 0 ? "closed its stdout in the middle of a line (" + std::to_string(pending) + " bytes)"
                             : "closed its stdout");
      return;
    }
    if (!self->fault_) self->read_stdout();
  });
}

void WorkerProcess::read_stderr() {
  stderr_.async_read_some(asio::buffer(stderr_buffer_), [self = shared_from_this()](
                                                            const boost::system::error_code& ec, std::size_t n) {
    self->append_stderr(n);
    if (!ec) return self->read_stderr();
    self->stderr_closed_ = true;
    if (self->exit_) self->complete();
  });
}

void WorkerProcess::append_stderr(std::size_t bytes) {
  stderr_tail_.append(stderr_buffer_.data(), bytes);
  if (stderr_tail_.size() > config_.stderr_tail_bytes)
    stderr_tail_.erase(0, stderr_tail_.size() - config_.stderr_tail_bytes);
}

void WorkerProcess::handle_line(const protocol::Line& line) {
  if (state_ == State::dying) return;  // being stopped: nothing it says matters any more
  if (line.oversized)
    return fail(WorkerFault::Kind::protocol_error,
                "wrote a line of " + std::to_string(line.dropped_bytes) + " bytes, over the limit of " +
                    std::to_string(config_.max_line_bytes));
  log::debug("<<< worker " + std::to_string(pid_) + " " + line.text);
  auto json = parse_json(line.text);
  if (!json) return fail(WorkerFault::Kind::protocol_error, json.error().message);

  if (state_ == State::starting) {
    auto hello = protocol::decode_hello(*json);
    if (!hello) return fail(WorkerFault::Kind::protocol_error, "bad hello: " + hello.error().message);
    if (!config_.backend.empty() && !protocol::serves(hello->backends, config_.backend)) {
      std::string served;
      for (const std::string& name : hello->backends) served += (served.empty() ? "" : ", ") + name;
      return fail(WorkerFault::Kind::protocol_error, config_.executable.string() + " serves " + served +
                                                         ", not backend '" + config_.backend + "'");
    }
    hello_deadline_.cancel();
    hello_ = *hello;
    state_ = State::idle;
    auto handler = std::move(on_start_);
    on_start_ = nullptr;
    handler(*hello);
    return;
  }
  if (protocol::is_readiness(*json)) return handle_readiness(*json);
  handle_reply(*json);
}

void WorkerProcess::handle_readiness(const nlohmann::json& json) {
  if (!serves_in_children()) return fail(WorkerFault::Kind::protocol_error, "said its readiness, not serving in children");
  auto readiness = protocol::decode_readiness(json);
  if (!readiness) return fail(WorkerFault::Kind::protocol_error, "bad readiness: " + readiness.error().message);
  bool was_ready = std::exchange(child_ready_, readiness->ready);
  if (child_ready_ && !was_ready && on_ready_) on_ready_();
}

void WorkerProcess::handle_reply(const nlohmann::json& json) {
  if (in_flight_.empty() && cancelled_.empty()) return fail(WorkerFault::Kind::protocol_error, "wrote a line while idle");
  auto reply = protocol::decode_reply(json);
  if (!reply) return fail(WorkerFault::Kind::protocol_error, "bad reply: " + reply.error().message);
  std::uint64_t id = protocol::id_of(*reply);
  auto answered = in_flight_.find(id);
  if (answered == in_flight_.end()) {
    if (forget_cancelled(id)) return;  // written before the worker read our cancel
    return fail(WorkerFault::Kind::protocol_error,
                "replied to request " + std::to_string(id) + " while " + describe_in_flight());
  }
  InFlight request = std::move(answered->second);
  in_flight_.erase(answered);
  while (!cancelled_.empty() && cancelled_.front().sequence < request.sequence) cancelled_.pop_front();
  if (in_flight_.empty()) state_ = State::idle;
  // A concurrent worker's stderr interleaves its children's: its verdicts carry their own child's tail.
  if (auto* evaluated = std::get_if<protocol::EvaluateReply>(&*reply);
      evaluated && !evaluated->verdict.pass && concurrency() == 1)
    evaluated->verdict.stderr_tail = stderr_tail_;
  request.on_reply(std::move(*reply));
}

bool WorkerProcess::forget_cancelled(std::uint64_t id) {
  auto cancelled = std::find_if(cancelled_.begin(), cancelled_.end(), [&](const Cancelled& c) { return c.id == id; });
  if (cancelled == cancelled_.end()) return false;
  cancelled_.erase(cancelled);
  return true;
}

std::string WorkerProcess::describe_in_flight() const {
  if (in_flight_.empty()) return "no request is pending";
  std::string ids;
  for (const auto& [id, unused] : in_flight_) ids += (ids.empty() ? "" : ", ") + std::to_string(id);
  return in_flight_.size() == 1 ? "request " + ids + " is pending" : "requests " + ids + " are pending";
}

bool WorkerProcess::has_room() const {
  return (state_ == State::idle || state_ == State::busy) && in_flight_.size() < concurrency() && child_ready_;
}

std::optional<std::string> WorkerProcess::refusal(std::uint64_t id) const {
  if (state_ != State::idle && state_ != State::busy) return std::string("is not ready for requests");
  if (!child_ready_) return std::string("said no child of it is ready to serve, or has not answered a cancel");
  if (!has_room()) return "is busy (" + std::to_string(in_flight_.size()) + " requests in flight, its concurrency)";
  if (in_flight_.count(id) > 0) return "already serves request " + std::to_string(id);
  if (std::any_of(cancelled_.begin(), cancelled_.end(), [&](const Cancelled& c) { return c.id == id; }))
    return "may still answer the cancelled request " + std::to_string(id);
  return std::nullopt;
}

void WorkerProcess::request(const protocol::WorkerRequest& request, std::chrono::milliseconds timeout,
                            ReplyHandler on_reply) {
  std::uint64_t id = protocol::id_of(request);
  if (auto refused = refusal(id)) {
    WorkerFault fault{WorkerFault::Kind::exited, {}, *refused, stderr_tail_};
    fault.worker_survives = state_ == State::idle || state_ == State::busy;
    asio::post(io_, [handler = std::move(on_reply), fault] { handler(fault); });
    return;
  }
  if (in_flight_.empty()) stderr_tail_.clear();  // the tail reported with a failure is from this request on
  state_ = State::busy;
  InFlight& sent = in_flight_[id];
  sent.on_reply = std::move(on_reply);
  sent.sequence = write(protocol::encode(request).dump() + "\n");
  sent.deadline = std::make_unique<asio::steady_timer>(io_, timeout);
  sent.deadline->async_wait([self = shared_from_this(), id, sequence = sent.sequence, timeout](
                                const boost::system::error_code& ec) {
    if (!ec) self->on_deadline(id, sequence, timeout);
  });
}

void WorkerProcess::on_deadline(std::uint64_t id, std::uint64_t sequence, std::chrono::milliseconds timeout) {
  auto late = in_flight_.find(id);
  if (state_ != State::busy || late == in_flight_.end() || late->second.sequence != sequence) return;
  std::string detail = "no reply within " + std::to_string(timeout.count()) + " ms";
  if (concurrency() == 1) return fail(WorkerFault::Kind::timed_out, std::move(detail));
  end_request(id, WorkerFault::Kind::timed_out, std::move(detail));
}

void WorkerProcess::cancel(std::uint64_t request_id) {
  if (state_ != State::busy || in_flight_.count(request_id) == 0) return;
  if (concurrency() == 1 && !serves_in_children()) return cancel();
  end_request(request_id, WorkerFault::Kind::cancelled, "cancelled by the coordinator");
}

void WorkerProcess::end_request(std::uint64_t id, WorkerFault::Kind kind, std::string detail) {
  auto ended = in_flight_.extract(id);
  std::uint64_t sequence = write(protocol::encode(protocol::WorkerRequest(protocol::CancelRequest{id})).dump() + "\n");
  cancelled_.push_back(Cancelled{id, sequence});
  if (in_flight_.empty()) state_ = State::idle;
  // A worker serving in children answers a cancel with a readiness line: until then, whether the cancel
  // left it a ready child is unknown, and a request sent now may wait seconds for one to warm up.
  if (serves_in_children()) child_ready_ = false;
  WorkerFault fault{kind, {}, std::move(detail), {}};
  fault.worker_survives = true;
  // Posted: a caller that cancels requests in a loop must not have its handlers run inside it.
  asio::post(io_, [handler = std::move(ended.mapped().on_reply), fault] { handler(fault); });
}

std::uint64_t WorkerProcess::write(std::string line) {
  log::debug(">>> worker " + std::to_string(pid_) + " " + line.substr(0, line.size() - 1));
  outbox_.push_back(std::move(line));
  if (outbox_.size() == 1) write_next();
  return ++lines_queued_;
}

void WorkerProcess::write_next() {
  // One write at a time: lines written concurrently to one pipe could interleave.
  asio::async_write(stdin_, asio::buffer(outbox_.front()), [self = shared_from_this()](
                                                               const boost::system::error_code& ec, std::size_t) {
    if (ec) {
      if (!self->stopping_) self->fail(WorkerFault::Kind::exited, "stdin closed: " + ec.message());
      return;
    }
    self->outbox_.pop_front();
    if (!self->outbox_.empty()) self->write_next();
  });
}

void WorkerProcess::stop(std::function<void()> on_exit) {
  if (state_ == State::dead) {
    if (on_exit) asio::post(io_, std::move(on_exit));
    return;
  }
  on_exit_ = std::move(on_exit);
  if (state_ == State::dying) return;
  stopping_ = true;
  if (state_ == State::idle) write(protocol::encode(protocol::WorkerRequest(protocol::ShutdownRequest{0})).dump() + "\n");
  else signal_group(SIGTERM);
  state_ = State::dying;
  dying_since_ = std::chrono::steady_clock::now();
  poll_reap();
}

void WorkerProcess::cancel() { fail(WorkerFault::Kind::cancelled, "cancelled by the coordinator"); }

void WorkerProcess::fail(WorkerFault::Kind kind, std::string detail) {
  if (fault_ || state_ == State::dead) return;
  fault_ = WorkerFault{kind, {}, std::move(detail), {}};
  hello_deadline_.cancel();
  bool was_dying = state_ == State::dying;
  state_ = State::dying;
  if (!was_dying) dying_since_ = std::chrono::steady_clock::now();
  switch (kind) {
    case WorkerFault::Kind::timed_out: signal_group(SIGTERM); break;  // ask first
    case WorkerFault::Kind::protocol_error:
    case WorkerFault::Kind::cancelled: signal_group(SIGKILL); break;
    default: break;  // it is already on its way out
  }
  poll_reap();
}

void WorkerProcess::signal_group(int signal) {
  // The group is the worker's own (process/spawn.h), so this reaches whatever it started too.
  process::signal_group(pid_, signal);
}

void WorkerProcess::poll_reap() {
  if (state_ == State::dead || exit_) return;
  int status = 0;
  pid_t reaped = ::waitpid(pid_, &status, WNOHANG);
  if (reaped == pid_) return finish(decode_wait_status(status));
  if (reaped < 0 && errno != EINTR) {
    log::error("waitpid(" + std::to_string(pid_) + "): " + std::strerror(errno));
    return finish(ExitStatus{false, -1, 0});
  }
  if (std::chrono::steady_clock::now() - dying_since_ > config_.kill_grace) signal_group(SIGKILL);
  reap_timer_.expires_after(std::chrono::milliseconds(2));
  reap_timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
    if (!ec) self->poll_reap();
  });
}

void WorkerProcess::finish(ExitStatus status) {
  signal_group(SIGKILL);  // anything the worker left behind in its group
  exit_ = status;
  log::debug("worker " + std::to_string(pid_) + " " + minifyd::describe(status));
  if (stderr_closed_) return complete();
  // Its last words may still be in the stderr pipe; the group is dead, so EOF comes promptly. The
  // timer covers a descendant that escaped the group with the pipe open.
  reap_timer_.expires_after(std::chrono::milliseconds(200));
  reap_timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
    if (!ec) self->complete();
  });
}

void WorkerProcess::complete() {
  if (state_ == State::dead) return;
  state_ = State::dead;
  reap_timer_.cancel();
  boost::system::error_code ignored;
  stdin_.close(ignored);
  stdout_.close(ignored);
  stderr_.close(ignored);
  std::error_code scratch_error;
  std::filesystem::remove_all(scratch_, scratch_error);
  scratch_.clear();
  WorkerFault fault = fault_.value_or(WorkerFault{WorkerFault::Kind::exited, {}, "stopped", {}});
  fault.exit = *exit_;
  fault.stderr_tail = stderr_tail_;
  if (fault.kind == WorkerFault::Kind::exited && exit_->signaled) fault.kind = WorkerFault::Kind::crashed;
  if (on_start_) {
    auto handler = std::move(on_start_);
    on_start_ = nullptr;
    handler(fault);
  } else if (!in_flight_.empty()) {
    // Every request it still owed gets the fault.
    auto owed = std::move(in_flight_);
    in_flight_.clear();
    for (auto& [id, request] : owed) request.on_reply(fault);
  } else if (on_death_ && !stopping_) {
    on_death_(fault);
  }
  if (on_exit_) {
    auto handler = std::move(on_exit_);
    on_exit_ = nullptr;
    handler();
  }
}

}  // namespace minifyd::pool
