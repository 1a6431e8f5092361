// WorkerPool against the fake worker: every request answered exactly once, faulty workers
// replaced, cancellation without leaks, a pool that cannot start workers fails instead of hanging.
#include <catch2/catch.hpp>

#include <map>
#include <set>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "daemon/pool/worker_pool.h"
#include "tests/support/fake_pool.h"

using namespace minifyd;
using namespace std::chrono_literals;
using test::fake_pool;
using test::passed;
using test::scripted;

namespace {

const std::string crash = "!signal SEGV";

using Times = std::map<std::uint64_t, std::chrono::steady_clock::time_point>;

// A pool of one fake worker serving in children, playing `transcript`, that records when each request
// was sent and answered (by ticket).
pool::PoolConfig children_pool(const std::string& transcript, Times& sent, Times& answered) {
  pool::PoolConfig config = fake_pool(1);
  config.worker.arguments = {std::string(MINIFYD_TRANSCRIPTS) + "/" + transcript};
  config.on_event = [&sent, &answered](const pool::PoolEvent& event) {
    if (event.kind == pool::PoolEvent::Kind::request_sent) sent[event.ticket] = std::chrono::steady_clock::now();
    if (event.kind == pool::PoolEvent::Kind::request_answered) answered[event.ticket] = std::chrono::steady_clock::now();
  };
  return config;
}

}  // namespace

TEST_CASE("crashing requests are contained and every request is answered once", "[worker_pool]") {
  boost::asio::io_context io;
  pool::WorkerPool pool(io, fake_pool(2));
  pool.start();
  std::vector<int> answers(20, 0);
  std::vector<std::optional<pool::WorkerOutcome>> outcomes(20);
  int remaining = 20;
  for (int i = 0; i < 20; ++i) {
    pool.submit(scripted(i % 2 ? crash : ""), 5s, [&, i](pool::WorkerOutcome outcome) {
      ++answers[i];
      outcomes[i] = std::move(outcome);
      if (--remaining == 0) pool.stop([] {});
    });
  }
  io.run();
  for (int i = 0; i < 20; ++i) {
    INFO("request " << i);
    CHECK(answers[i] == 1);
    REQUIRE(outcomes[i].has_value());
    if (i % 2) {
      REQUIRE(std::holds_alternative<pool::WorkerFault>(*outcomes[i]));
      CHECK(signal_name(std::get<pool::WorkerFault>(*outcomes[i]).exit.signal) == "SIGSEGV");
    } else {
      CHECK(passed(*outcomes[i]));
    }
  }
  CHECK(pool.stats().crashes_contained == 10);
  CHECK(pool.stats().requests == 20);
}

TEST_CASE("a hung worker is killed at its deadline and the next request passes", "[worker_pool]") {
  boost::asio::io_context io;
  pool::WorkerPool pool(io, fake_pool(1));
  pool.start();
  std::optional<pool::WorkerOutcome> hung, after;
  pool.submit(scripted("!hang"), 300ms, [&](pool::WorkerOutcome outcome) { hung = std::move(outcome); });
  pool.submit(scripted(""), 5s, [&](pool::WorkerOutcome outcome) {
    after = std::move(outcome);
    pool.stop([] {});
  });
  io.run();
  REQUIRE(hung.has_value());
  REQUIRE(std::holds_alternative<pool::WorkerFault>(*hung));
  CHECK(std::get<pool::WorkerFault>(*hung).kind == pool::WorkerFault::Kind::timed_out);
  REQUIRE(after.has_value());
  CHECK(passed(*after));
  CHECK(pool.stats().timeouts == 1);
}

TEST_CASE("cancelling queued and running requests answers them and leaks no worker", "[worker_pool]") {
  boost::asio::io_context io;
  pool::WorkerPool pool(io, fake_pool(1, false));
  pool.start();
  std::optional<pool::WorkerOutcome> running, queued, later;
  auto running_ticket = pool.submit(scripted("!sleep 10000"), 30s, [&](pool::WorkerOutcome o) { running = std::move(o); });
  auto queued_ticket = pool.submit(scripted(""), 30s, [&](pool::WorkerOutcome o) { queued = std::move(o); });
  pool.submit(scripted(""), 30s, [&](pool::WorkerOutcome o) {
    later = std::move(o);
    pool.stop([] {});
  });
  boost::asio::steady_timer timer(io, 500ms);
  timer.async_wait([&](const boost::system::error_code&) {
    pool.cancel(queued_ticket);
    pool.cancel(running_ticket);
  });
  auto begin = std::chrono::steady_clock::now();
  io.run();
  CHECK(std::chrono::steady_clock::now() - begin < 8s);
  REQUIRE(running.has_value());
  CHECK(std::get<pool::WorkerFault>(*running).kind == pool::WorkerFault::Kind::cancelled);
  REQUIRE(queued.has_value());
  CHECK(std::get<pool::WorkerFault>(*queued).kind == pool::WorkerFault::Kind::cancelled);
  REQUIRE(later.has_value());
  CHECK(passed(*later));
}

TEST_CASE("a worker serving in children is sent nothing while it says no child of it is ready", "[worker_pool]") {
  boost::asio::io_context io;
  Times sent, answered;
  pool::WorkerPool pool(io, children_pool("children.transcript", sent, answered));
  pool.start();
  std::optional<pool::WorkerOutcome> first, second;
  // Its serving child ends with the first verdict; the next is ready 600 ms later.
  auto first_ticket = pool.submit(scripted(R"({"type":"readiness","ready":false};)"
                                           R"({"type":"verdict","id":$ID,"verdict":{"status":"pass"}};)"
                                           R"(!sleep 600;{"type":"readiness","ready":true})"),
                                  5s, [&](pool::WorkerOutcome o) { first = std::move(o); });
  auto second_ticket = pool.submit(scripted(""), 5s, [&](pool::WorkerOutcome o) {
    second = std::move(o);
    pool.stop([] {});
  });
  io.run();
  REQUIRE(first.has_value());
  CHECK(passed(*first));
  REQUIRE(second.has_value());
  CHECK(passed(*second));
  REQUIRE((answered.count(first_ticket) && sent.count(second_ticket)));
  CHECK(sent[second_ticket] - answered[first_ticket] >= 500ms);
}

TEST_CASE("a worker serving in children is sent nothing between a cancel and the readiness line answering it",
          "[worker_pool]") {
  boost::asio::io_context io;
  Times sent, answered;
  // The cancel is answered: no child ready (the cancel killed the serving one), then one ready 600 ms later.
  pool::WorkerPool pool(io, children_pool("cancel_in_children.transcript", sent, answered));
  pool.start();
  std::optional<pool::WorkerOutcome> cancelled, next;
  std::chrono::steady_clock::time_point cancelled_at;
  auto slow = pool.submit(scripted(R"(!sleep 300;{"type":"verdict","id":$ID,"verdict":{"status":"pass"}})"), 5s,
                          [&](pool::WorkerOutcome o) { cancelled = std::move(o); });
  auto next_ticket = pool.submit(scripted(""), 5s, [&](pool::WorkerOutcome o) {
    next = std::move(o);
    pool.stop([] {});
  });
  boost::asio::steady_timer timer(io, 100ms);
  timer.async_wait([&](const boost::system::error_code&) {
    cancelled_at = std::chrono::steady_clock::now();
    pool.cancel(slow);
  });
  io.run();
  REQUIRE(cancelled.has_value());
  REQUIRE(std::holds_alternative<pool::WorkerFault>(*cancelled));
  CHECK(std::get<pool::WorkerFault>(*cancelled).kind == pool::WorkerFault::Kind::cancelled);
  REQUIRE(next.has_value());
  CHECK(passed(*next));
  REQUIRE(sent.count(next_ticket));
  // The worker read the cancel once the slow request's 300 ms were up, then got a child ready in 600.
  CHECK(sent[next_ticket] - cancelled_at >= 700ms);
}

TEST_CASE("a readiness line from a worker not serving in children is a protocol error", "[worker_pool]") {
  boost::asio::io_context io;
  pool::WorkerPool pool(io, fake_pool(1));
  pool.start();
  std::optional<pool::WorkerOutcome> outcome;
  pool.submit(scripted(R"({"type":"readiness","ready":false};{"type":"verdict","id":$ID,"verdict":{"status":"pass"}})"),
              5s, [&](pool::WorkerOutcome o) {
                outcome = std::move(o);
                pool.stop([] {});
              });
  io.run();
  REQUIRE(outcome.has_value());
  REQUIRE(std::holds_alternative<pool::WorkerFault>(*outcome));
  CHECK(std::get<pool::WorkerFault>(*outcome).kind == pool::WorkerFault::Kind::protocol_error);
  CHECK_THAT(std::get<pool::WorkerFault>(*outcome).detail, Catch::Contains("not serving in children"));
}

TEST_CASE("a pool whose workers cannot start fails its requests instead of hanging", "[worker_pool]") {
  boost::asio::io_context io;
  pool::PoolConfig config = fake_pool(1, false);
  config.worker.executable = "/nonexistent/minify-worker";
  pool::WorkerPool pool(io, config);
  pool.start();
  std::optional<pool::WorkerOutcome> outcome;
  pool.submit(scripted(""), 5s, [&](pool::WorkerOutcome o) {
    outcome = std::move(o);
    pool.stop([] {});
  });
  io.run();
  REQUIRE(outcome.has_value());
  REQUIRE(std::holds_alternative<pool::WorkerFault>(*outcome));
  CHECK(std::get<pool::WorkerFault>(*outcome).kind == pool::WorkerFault::Kind::spawn_failed);
  CHECK(std::get<pool::WorkerFault>(*outcome).detail.find("no worker could be started") == 0);
}

TEST_CASE("each slot's workers get the slot's CUDA_VISIBLE_DEVICES", "[worker_pool]") {
  boost::asio::io_context io;
  pool::PoolConfig config = fake_pool(2, false);
  config.worker.arguments = {std::string(MINIFYD_TRANSCRIPTS) + "/report.transcript"};
  config.slots = {pool::PoolSlot{"0"}, pool::PoolSlot{"1"}};
  pool::WorkerPool pool(io, config);
  pool.start();
  std::vector<protocol::WorkerHello> hellos;
  boost::asio::steady_timer poll(io);
  std::function<void()> wait_for_both = [&] {
    hellos = pool.hellos();
    if (hellos.size() == 2) return pool.stop([] {});
    poll.expires_after(20ms);
    poll.async_wait([&](const boost::system::error_code&) { wait_for_both(); });
  };
  wait_for_both();
  io.run();
  REQUIRE(hellos.size() == 2);
  std::set<std::string> seen;
  for (const auto& hello : hellos) seen.insert(hello.sandbox["cuda_visible_devices"].get<std::string>());

  CHECK(seen == std::set<std::string>{"0", "1"});
}
