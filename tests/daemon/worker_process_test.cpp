// WorkerProcess against the fake worker: every way a worker can fail is contained, classified and
// reaped; the sandbox holds; a worker dies with its coordinator.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include <boost/asio/io_context.hpp>

#include "daemon/pool/worker_process.h"
#include "tests/support/sandbox_checks.h"

using namespace minifyd;
using namespace std::chrono_literals;

namespace {

struct Run {
  std::optional<pool::WorkerStart> start;
  std::optional<pool::WorkerOutcome> outcome;
  pid_t pid = -1;
  std::chrono::milliseconds elapsed{0};
};

pool::WorkerConfig fake_config(const std::string& transcript) {
  pool::WorkerConfig config;
  config.executable = MINIFYD_FAKE_WORKER;
  config.arguments = {std::string(MINIFYD_TRANSCRIPTS) + "/" + transcript + ".transcript"};
  config.hello_timeout = 2s;
  config.kill_grace = 200ms;
  config.max_line_bytes = 100'000;
  return config;
}

protocol::WorkerRequest evaluate_request(std::uint64_t id) {
  return protocol::EvaluateRequest{id, nlohmann::json::object(), "/nonexistent", "eager", {}, protocol::AccuracyMode::off};
}

// Starts a worker, sends one evaluate request when it is ready, stops it after the outcome.
Run run_one(pool::WorkerConfig config, std::chrono::milliseconds timeout = 2s) {
  boost::asio::io_context io;
  Run run;
  std::shared_ptr<pool::WorkerProcess> worker;
  auto begin = std::chrono::steady_clock::now();
  worker = pool::WorkerProcess::start(io, std::move(config), [&](pool::WorkerStart start) {
    run.start = start;
    if (auto* fault = std::get_if<pool::WorkerFault>(&start)) {
      UNSCOPED_INFO("start: " << fault->describe() << " stderr: " << fault->stderr_tail);
      return;
    }
    begin = std::chrono::steady_clock::now();
    worker->request(evaluate_request(41), timeout, [&](pool::WorkerOutcome outcome) {
      run.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - begin);
      run.outcome = std::move(outcome);
      worker->stop();
    });
  });
  run.pid = worker->pid();
  io.run();
  CHECK(worker->state() == pool::WorkerProcess::State::dead);
  return run;
}

const pool::WorkerFault& fault_of(const Run& run) {
  REQUIRE(run.outcome.has_value());
  REQUIRE(std::holds_alternative<pool::WorkerFault>(*run.outcome));
  return std::get<pool::WorkerFault>(*run.outcome);
}

}  // namespace

TEST_CASE("a worker that follows the protocol answers and is reaped after stop", "[worker_process]") {
  Run run = run_one(fake_config("pass"));
  REQUIRE(run.outcome.has_value());
  REQUIRE(std::holds_alternative<protocol::WorkerReply>(*run.outcome));
  const auto& reply = std::get<protocol::EvaluateReply>(std::get<protocol::WorkerReply>(*run.outcome));
  CHECK(reply.id == 41);
  CHECK(reply.verdict.pass);
  CHECK_FALSE(test::process_exists(run.pid));
}

TEST_CASE("garbage, truncated, oversized and mismatched replies are worker faults", "[worker_process][transcript]") {
  struct Case {
    const char* transcript;
    pool::WorkerFault::Kind kind;
    const char* detail;
  };
  const Case cases[] = {
      {"garbage", pool::WorkerFault::Kind::protocol_error, "invalid JSON at byte"},
      {"truncated", pool::WorkerFault::Kind::exited, "closed its stdout in the middle of a line"},
      {"oversized", pool::WorkerFault::Kind::protocol_error, "over the limit of 100000"},
      {"wrong_id", pool::WorkerFault::Kind::protocol_error, "replied to request 12345 while request 41 is pending"},
      {"bad_verdict", pool::WorkerFault::Kind::protocol_error, "bad reply: verdict: status: 'maybe' is neither pass nor fail"},
  };
  for (const Case& c : cases) {
    INFO(c.transcript);
    Run run = run_one(fake_config(c.transcript));
    const pool::WorkerFault& fault = fault_of(run);
    CHECK(fault.kind == c.kind);
    CHECK(fault.detail.find(c.detail) != std::string::npos);
    CHECK_FALSE(test::process_exists(run.pid));
  }
  // After all that, a fresh worker still answers.
  Run after = run_one(fake_config("pass"));
  REQUIRE(std::holds_alternative<protocol::WorkerReply>(*after.outcome));
}

TEST_CASE("crashes are classified by signal and keep the stderr tail", "[worker_process]") {
  Run segfault = run_one(fake_config("segfault"));
  const pool::WorkerFault& fault = fault_of(segfault);
  CHECK(fault.kind == pool::WorkerFault::Kind::crashed);
  CHECK(fault.exit.signaled);
  CHECK(signal_name(fault.exit.signal) == "SIGSEGV");
  CHECK(fault.stderr_tail.find("about to crash") != std::string::npos);

  CHECK(signal_name(fault_of(run_one(fake_config("abort"))).exit.signal) == "SIGABRT");

  Run exit_run = run_one(fake_config("exit"));
  const pool::WorkerFault& exited = fault_of(exit_run);
  CHECK(exited.kind == pool::WorkerFault::Kind::exited);
  CHECK(exited.exit.code == 3);
}

TEST_CASE("a hung worker that ignores SIGTERM is killed after the grace period", "[worker_process]") {
  Run run = run_one(fake_config("hang"), 300ms);
  const pool::WorkerFault& fault = fault_of(run);
  CHECK(fault.kind == pool::WorkerFault::Kind::timed_out);
  CHECK(fault.exit.signaled);
  CHECK(signal_name(fault.exit.signal) == "SIGKILL");
  CHECK(run.elapsed >= 300ms);
  CHECK(run.elapsed < 300ms + 200ms + 1000ms);
  CHECK_FALSE(test::process_exists(run.pid));
}

TEST_CASE("a worker without a valid hello never gets a request", "[worker_process]") {
  Run wrong = run_one(fake_config("wrong_version"));
  REQUIRE(wrong.start.has_value());
  REQUIRE(std::holds_alternative<pool::WorkerFault>(*wrong.start));
  CHECK(std::get<pool::WorkerFault>(*wrong.start).detail.find("worker speaks minifyd.worker version 99") != std::string::npos);
  CHECK_FALSE(wrong.outcome.has_value());

  pool::WorkerConfig silent = fake_config("no_hello");
  silent.hello_timeout = 300ms;
  Run none = run_one(silent);
  REQUIRE(std::holds_alternative<pool::WorkerFault>(*none.start));
  CHECK(std::get<pool::WorkerFault>(*none.start).kind == pool::WorkerFault::Kind::timed_out);

  pool::WorkerConfig missing = fake_config("pass");
  missing.executable = "/nonexistent/minify-worker";
  Run absent = run_one(missing);
  REQUIRE(std::holds_alternative<pool::WorkerFault>(*absent.start));
  CHECK(std::get<pool::WorkerFault>(*absent.start).kind == pool::WorkerFault::Kind::spawn_failed);
}

TEST_CASE("the sandbox: allowlisted environment, only fds 0-2, own process group, scratch cwd", "[worker_process][sandbox]") {
  test::check_sandbox(fake_config("report"));
}

TEST_CASE("a worker dies when its coordinator is SIGKILLed", "[worker_process][sandbox]") {
  test::check_dies_with_coordinator(fake_config("hang"));
}
