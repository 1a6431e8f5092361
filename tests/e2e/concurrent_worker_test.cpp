// Concurrent workers with the real minify-worker and the faulty plugin: a hung request costs its
// forked child, not the worker. WorkerProcess times out or cancels one request and the same process
// serves on; the pool parks a long request and runs the slot's next one beside it; slots share one worker.
#include <catch2/catch.hpp>

#include <csignal>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "common/graph_codec.h"
#include "daemon/pool/worker_pool.h"
#include "daemon/verdict/verdict_of_outcome.h"
#include "tests/support/fork_server_worker.h"
#include "tests/support/sample_graph_dir.h"
#include "tests/support/temp_dir.h"

using namespace minifyd;
using namespace std::chrono_literals;

namespace {

// A small real graph, and requests for it: one that hangs in the faulty plugin, one that passes.
struct Requests {
  Requests() {
    auto graph = test::write_unary_graph(dir / "graph", "aten::relu");
    auto document = load_graph_dir(graph);
    REQUIRE(document.has_value());
    std::string store = (graph / store_dir_name).string();
    hang = protocol::EvaluateRequest{0, encode_graph_document(*document), store,
                                     std::string("plugin:") + MINIFYD_FAULTY_PLUGIN,
                                     {{"op", "aten::relu"}, {"fault", "hang"}}, protocol::AccuracyMode::off};
    pass = protocol::EvaluateRequest{0, encode_graph_document(*document), store, "eager", {}, protocol::AccuracyMode::off};
  }

  static protocol::WorkerRequest with_id(protocol::EvaluateRequest request, std::uint64_t id) {
    request.id = id;
    return request;
  }

  test::TempDir dir;
  protocol::EvaluateRequest hang;
  protocol::EvaluateRequest pass;
};

pool::WorkerConfig real_worker(std::size_t concurrency) {
  return test::fork_server_worker({"--max-concurrent", std::to_string(concurrency)});
}

bool passed(const std::optional<pool::WorkerOutcome>& outcome) {
  if (!outcome) return false;
  auto verdict = verdict::verdict_of(*outcome);
  return verdict && verdict->pass;
}

// The fault that ended a request while its worker lived on.
void check_request_fault(const std::optional<pool::WorkerOutcome>& outcome, pool::WorkerFault::Kind kind) {
  REQUIRE(outcome.has_value());
  REQUIRE(std::holds_alternative<pool::WorkerFault>(*outcome));
  const pool::WorkerFault& fault = std::get<pool::WorkerFault>(*outcome);
  CHECK(fault.kind == kind);
  CHECK(fault.worker_survives);
}

// A started one-slot pool of real workers that parks requests after 20 ms, and its requests.
struct ParkingPool {
  ParkingPool() : pool(io, config()) {
    pool.start();
    started = pool.stats().workers_started;
  }

  static pool::PoolConfig config() {
    pool::PoolConfig config;
    config.worker = real_worker(4);
    config.park_after = 20ms;
    return config;
  }

  Requests requests;
  boost::asio::io_context io;
  pool::WorkerPool pool;
  std::uint64_t started = 0;  // workers started before any request
};

}  // namespace

TEST_CASE("a concurrent worker answers beside a hung request and outlives its timeout", "[e2e][concurrent]") {
  Requests requests;
  boost::asio::io_context io;
  std::shared_ptr<pool::WorkerProcess> worker;
  std::optional<pool::WorkerOutcome> hung, beside, after;
  bool beside_before_timeout = false;
  worker = pool::WorkerProcess::start(io, real_worker(4), [&](pool::WorkerStart start) {
    REQUIRE(std::holds_alternative<protocol::WorkerHello>(start));
    CHECK(worker->concurrency() == 4);
    worker->request(Requests::with_id(requests.hang, 1), 2s, [&](pool::WorkerOutcome outcome) {
      hung = std::move(outcome);
      worker->request(Requests::with_id(requests.pass, 3), 60s, [&](pool::WorkerOutcome later) {
        after = std::move(later);
        worker->stop();
      });
    });
    worker->request(Requests::with_id(requests.pass, 2), 60s, [&](pool::WorkerOutcome outcome) {
      beside = std::move(outcome);
      beside_before_timeout = !hung.has_value();
    });
  });
  pid_t pid = worker->pid();
  io.run();
  CHECK(passed(beside));
  CHECK(beside_before_timeout);
  check_request_fault(hung, pool::WorkerFault::Kind::timed_out);
  CHECK(passed(after));  // the same process: a dead one would have failed request 3
  REQUIRE(worker->hello().has_value());
  CHECK(worker->hello()->pid == pid);
}

TEST_CASE("cancelling one request of a concurrent worker ends it alone", "[e2e][concurrent]") {
  Requests requests;
  boost::asio::io_context io;
  std::shared_ptr<pool::WorkerProcess> worker;
  std::optional<pool::WorkerOutcome> cancelled, still_hung, after;
  worker = pool::WorkerProcess::start(io, real_worker(3), [&](pool::WorkerStart start) {
    REQUIRE(std::holds_alternative<protocol::WorkerHello>(start));
    worker->request(Requests::with_id(requests.hang, 1), 60s, [&](pool::WorkerOutcome o) { cancelled = std::move(o); });
    worker->request(Requests::with_id(requests.hang, 2), 60s, [&](pool::WorkerOutcome o) { still_hung = std::move(o); });
    worker->request(Requests::with_id(requests.pass, 3), 60s, [&](pool::WorkerOutcome outcome) {
      CHECK(passed(outcome));
      worker->cancel(1);
      worker->cancel(99);  // not in flight: ignored
      worker->request(Requests::with_id(requests.pass, 4), 60s, [&](pool::WorkerOutcome later) {
        after = std::move(later);
        CHECK_FALSE(still_hung.has_value());
        CHECK(worker->in_flight() == 1);
        CHECK(worker->state() == pool::WorkerProcess::State::busy);
        worker->cancel(2);
        CHECK(worker->state() == pool::WorkerProcess::State::idle);
        worker->stop();
      });
    });
  });
  io.run();
  check_request_fault(cancelled, pool::WorkerFault::Kind::cancelled);
  check_request_fault(still_hung, pool::WorkerFault::Kind::cancelled);
  CHECK(passed(after));
}

TEST_CASE("the pool parks a hanging request and runs the slot's next one beside it", "[e2e][concurrent]") {
  ParkingPool parking;
  Requests& requests = parking.requests;
  pool::WorkerPool& pool = parking.pool;
  std::optional<pool::WorkerOutcome> hung, beside;
  std::size_t parked_meanwhile = 0;
  std::vector<std::int64_t> pids;
  pool.submit(requests.hang, 3s, [&](pool::WorkerOutcome outcome) {
    hung = std::move(outcome);
    for (const auto& hello : pool.hellos()) pids.push_back(hello.pid);
    pool.stop([] {});
  });
  pool.submit(requests.pass, 60s, [&](pool::WorkerOutcome outcome) {
    beside = std::move(outcome);
    parked_meanwhile = pool.parked();
    CHECK_FALSE(hung.has_value());
    for (const auto& hello : pool.hellos()) pids.push_back(hello.pid);
  });
  parking.io.run();
  CHECK(passed(beside));
  CHECK(parked_meanwhile == 1);
  check_request_fault(hung, pool::WorkerFault::Kind::timed_out);
  // The passing request is parked too when it runs past 20 ms, as it did once on a loaded 16-core
  // machine.
  CHECK(pool.stats().parked >= 1);
  CHECK(pool.stats().timeouts == 1);
  CHECK(pool.stats().workers_started == parking.started);  // the timeout killed a child, not the worker
  REQUIRE(pids.size() == 2);
  CHECK(pids[0] == pids[1]);
  CHECK(pool.parked() == 0);
}

TEST_CASE("cancelling a parked request ends it alone and the worker serves on", "[e2e][concurrent]") {
  ParkingPool parking;
  Requests& requests = parking.requests;
  pool::WorkerPool& pool = parking.pool;
  std::optional<pool::WorkerOutcome> cancelled, after;
  int answers_to_cancelled = 0;
  pool::RequestPool::Ticket hang = pool.submit(requests.hang, 60s, [&](pool::WorkerOutcome outcome) {
    ++answers_to_cancelled;
    cancelled = std::move(outcome);
    pool.submit(requests.pass, 60s, [&](pool::WorkerOutcome later) {
      after = std::move(later);
      pool.stop([] {});
    });
  });
  pool.submit(requests.pass, 60s, [&](pool::WorkerOutcome outcome) {
    CHECK(passed(outcome));
    CHECK(pool.parked() == 1);
    pool.cancel(hang);
    pool.cancel(hang);  // once is enough: never answered twice
  });
  parking.io.run();
  CHECK(answers_to_cancelled == 1);
  check_request_fault(cancelled, pool::WorkerFault::Kind::cancelled);
  CHECK(passed(after));
  CHECK(pool.stats().cancelled == 1);
  CHECK(pool.stats().workers_started == parking.started);
  CHECK(pool.parked() == 0);
}

TEST_CASE("slots that share a concurrent worker start it once and again once when it dies", "[e2e][concurrent]") {
  Requests requests;
  boost::asio::io_context io;
  pool::PoolConfig config;
  config.worker = real_worker(4);
  config.slots.assign(2, pool::PoolSlot{});
  config.share_concurrent_workers = true;
  std::vector<std::pair<std::size_t, int>> sent;  // (slot, pid) of each request sent
  config.on_event = [&](const pool::PoolEvent& event) {
    if (event.kind == pool::PoolEvent::Kind::request_sent) sent.emplace_back(event.slot, event.pid);
  };
  pool::WorkerPool pool(io, config);
  pool.start();
  CHECK(pool.stats().workers_started == 1);
  std::optional<pool::WorkerOutcome> hung, beside, after_death_1, after_death_2;
  std::vector<protocol::WorkerHello> hellos_meanwhile;
  int remaining = 2;
  auto after_death = [&] {
    for (auto* outcome : {&after_death_1, &after_death_2})
      pool.submit(requests.pass, 60s, [&, outcome](pool::WorkerOutcome answer) {
        *outcome = std::move(answer);
        if (--remaining == 0) pool.stop([] {});
      });
  };
  pool.submit(requests.hang, 3s, [&](pool::WorkerOutcome outcome) {
    hung = std::move(outcome);
    // The shared worker dies (its own process, not a child): both slots lose it, one worker replaces it.
    REQUIRE(pool.hellos().size() == 1);
    ::kill(static_cast<pid_t>(pool.hellos().front().pid), SIGKILL);
    auto timer = std::make_shared<boost::asio::steady_timer>(io, 500ms);
    timer->async_wait([timer, &after_death](const boost::system::error_code&) { after_death(); });
  });
  pool.submit(requests.pass, 60s, [&](pool::WorkerOutcome outcome) {
    beside = std::move(outcome);
    hellos_meanwhile = pool.hellos();
  });
  io.run();
  check_request_fault(hung, pool::WorkerFault::Kind::timed_out);
  CHECK(passed(beside));
  CHECK(hellos_meanwhile.size() == 1);  // two slots, one worker
  CHECK(passed(after_death_1));
  CHECK(passed(after_death_2));
  CHECK(pool.stats().workers_started == 2);
  REQUIRE(sent.size() == 4);
  CHECK(sent[0].first != sent[1].first);  // the hang and the pass on two slots, one process
  CHECK(sent[0].second == sent[1].second);
  CHECK(sent[2].second == sent[3].second);
  CHECK(sent[2].second != sent[0].second);
}
