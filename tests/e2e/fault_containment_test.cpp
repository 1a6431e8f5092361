// Fault containment with real workers: for each fault of the faulty plugin, 50 times in a row, the
// faulty query gets its verdict and the next query passes; this process, the coordinator, lives
// through all of it and leaves no worker behind.
#include <catch2/catch.hpp>

#include <set>

#include <boost/asio/io_context.hpp>

#include "common/graph_codec.h"
#include "daemon/pool/worker_pool.h"
#include "daemon/verdict/verdict_of_outcome.h"
#include "tests/support/fork_server_worker.h"
#include "tests/support/sample_graph_dir.h"
#include "tests/support/temp_dir.h"

using namespace minifyd;
using namespace std::chrono_literals;

namespace {

constexpr int rounds = 50;

protocol::EvaluateRequest request_for(const std::filesystem::path& dir, const std::string& backend,
                                      std::map<std::string, std::string> options, protocol::AccuracyMode accuracy) {
  auto document = load_graph_dir(dir);
  REQUIRE(document.has_value());
  return protocol::EvaluateRequest{0, encode_graph_document(*document), (dir / store_dir_name).string(), backend,
                                   std::move(options), accuracy};
}

struct Tally {
  int faulty_as_expected = 0;
  int passes_after = 0;
  std::vector<std::string> surprises;
  pool::PoolStats stats;
  std::set<int> pids_serving_after;  // the worker that served each passing query
};

// Alternates faulty and passing queries `rounds` times on one pool of workers started with
// `worker_arguments` (by default fork servers serving requests concurrently).
Tally run_rounds(const std::string& fault, std::chrono::milliseconds timeout,
                 const std::function<bool(const protocol::Verdict&)>& expected,
                 std::vector<std::string> worker_arguments = {}) {
  test::TempDir dir;
  auto graph = test::write_unary_graph(dir / "graph", "aten::relu");
  auto faulty = request_for(graph, std::string("plugin:") + MINIFYD_FAULTY_PLUGIN,
                            {{"op", "aten::relu"}, {"fault", fault}},
                            fault == "wrong" ? protocol::AccuracyMode::accuracy : protocol::AccuracyMode::off);
  auto passing = request_for(graph, "eager", {}, protocol::AccuracyMode::off);

  pool::PoolConfig config;
  config.worker = test::fork_server_worker(std::move(worker_arguments));
  boost::asio::io_context io;
  pool::WorkerPool pool(io, config);
  pool.start();
  Tally tally;
  std::function<void(int)> round = [&](int remaining) {
    pool.submit(faulty, timeout, [&](pool::WorkerOutcome outcome) {
      auto verdict = verdict::verdict_of(outcome);
      if (verdict && expected(*verdict)) ++tally.faulty_as_expected;
      else tally.surprises.push_back(verdict ? protocol::describe(*verdict) : verdict.error().message);
    });
    pool.submit(passing, 60s, [&, remaining](pool::WorkerOutcome outcome) {
      for (const auto& hello : pool.hellos()) tally.pids_serving_after.insert(hello.pid);
      auto verdict = verdict::verdict_of(outcome);
      if (verdict && verdict->pass) ++tally.passes_after;
      else tally.surprises.push_back("after: " + (verdict ? protocol::describe(*verdict) : verdict.error().message));
      if (remaining > 1) round(remaining - 1);
      else pool.stop([] {});
    });
  };
  round(rounds);
  io.run();
  tally.stats = pool.stats();
  return tally;
}

void check(const Tally& tally) {
  for (const std::string& surprise : tally.surprises) UNSCOPED_INFO(surprise);
  CHECK(tally.faulty_as_expected == rounds);
  CHECK(tally.passes_after == rounds);
}

bool crashed_with(const protocol::Verdict& verdict, const char* signal) {
  return !verdict.pass && verdict.kind == protocol::FailureKind::crash && verdict.signal == signal;
}

}  // namespace

TEST_CASE("segfaults are contained 50 times in a row", "[e2e][faults]") {
  check(run_rounds("segfault", 60s, [](const protocol::Verdict& v) { return crashed_with(v, "SIGSEGV"); }));
}

TEST_CASE("aborts are contained 50 times in a row", "[e2e][faults]") {
  check(run_rounds("abort", 60s, [](const protocol::Verdict& v) { return crashed_with(v, "SIGABRT"); }));
}

bool timed_out(const protocol::Verdict& verdict) {
  return !verdict.pass && verdict.kind == protocol::FailureKind::timeout;
}

TEST_CASE("hangs are timed out 50 times in a row, each costing a child, not the worker", "[e2e][faults]") {
  Tally tally = run_rounds("hang", 400ms, timed_out);
  check(tally);
  CHECK(tally.stats.timeouts == rounds);
  CHECK(tally.stats.workers_started == 1);  // a fork server, never replaced, needs no spare
  CHECK(tally.pids_serving_after.size() == 1);
}

TEST_CASE("hangs are timed out 50 times in a row on workers serving one request at a time", "[e2e][faults]") {
  Tally tally = run_rounds("hang", 400ms, timed_out, {"--max-concurrent", "1"});
  check(tally);
  CHECK(tally.stats.workers_started == 2 + rounds);  // the first and its spare; each hang killed its worker
}

TEST_CASE("out-of-memory is contained 50 times in a row", "[e2e][faults]") {
  check(run_rounds("oom", 60s, [](const protocol::Verdict& v) {
    return !v.pass && (v.kind == protocol::FailureKind::exception || v.kind == protocol::FailureKind::crash);
  }));
}

TEST_CASE("exceptions are reported 50 times in a row", "[e2e][faults]") {
  check(run_rounds("throw", 60s, [](const protocol::Verdict& v) {
    return !v.pass && v.kind == protocol::FailureKind::exception && v.node == "unary";
  }));
}

TEST_CASE("wrong numbers are caught by the accuracy check 50 times in a row", "[e2e][faults]") {
  check(run_rounds("wrong", 60s, [](const protocol::Verdict& v) {
    return !v.pass && v.kind == protocol::FailureKind::accuracy;
  }));
}

bool illegal_address(const protocol::Verdict& verdict) {
  return !verdict.pass && verdict.kind == protocol::FailureKind::cuda_error &&
         verdict.message.rfind("CUDA error: an illegal memory access", 0) == 0;
}

TEST_CASE("a worker that reports a CUDA error is retired, 50 times in a row", "[e2e][faults]") {
  // Serving one request at a time, as a worker with a GPU does.
  Tally tally = run_rounds("cuda-error", 60s, illegal_address, {"--max-concurrent", "1"});
  check(tally);
  // Each CUDA error retired its worker before anything else was sent to it: every passing query
  // ran on a worker of its own.
  CHECK(tally.stats.retired_after_cuda_error == rounds);
  CHECK(tally.pids_serving_after.size() == rounds);
  CHECK(tally.stats.crashes_contained == 0);
}

TEST_CASE("a concurrent worker's child that reports a CUDA error is retired, 50 times in a row", "[e2e][faults]") {
  Tally tally = run_rounds("cuda-error", 60s, illegal_address);
  check(tally);
  // The child retired itself (tests/worker/fork_server_test.cpp); the fork server, which never
  // initialises CUDA, serves on.
  CHECK(tally.stats.retired_after_cuda_error == rounds);
  CHECK(tally.pids_serving_after.size() == 1);
  CHECK(tally.stats.crashes_contained == 0);
}
