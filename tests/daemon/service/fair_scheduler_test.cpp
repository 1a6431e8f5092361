// The scheduler that shares the daemon's pool among jobs, on a real pool of fake workers: clients
// take turns, a removed client's requests are cancelled, and a job thread's SharedPoolClient gets
// its answers on its own io_context.
#include <catch2/catch.hpp>

#include <thread>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include "common/graph_codec.h"
#include "daemon/pool/request_batch.h"
#include "daemon/service/fair_scheduler.h"
#include "daemon/service/shared_pool_client.h"
#include "daemon/verdict/evaluation_spec.h"
#include "tests/support/fake_pool.h"
#include "tests/support/sample_documents.h"

using namespace minifyd;
using namespace minifyd::service;
using namespace std::chrono_literals;
using test::fake_pool;

namespace {

protocol::WorkerRequest passing_request() {
  auto document = decode_graph_document(test::sample_document());
  REQUIRE(document.has_value());
  verdict::EvaluationSpec spec;
  spec.backend = "eager";
  return verdict::evaluate_request(spec, *document, "/tmp");
}

bool is_pass(const pool::WorkerOutcome& outcome) {
  auto* reply = std::get_if<protocol::WorkerReply>(&outcome);
  return reply != nullptr && std::holds_alternative<protocol::EvaluateReply>(*reply);
}

bool is_cancelled(const pool::WorkerOutcome& outcome) {
  auto* fault = std::get_if<pool::WorkerFault>(&outcome);
  return fault != nullptr && fault->kind == pool::WorkerFault::Kind::cancelled;
}

}  // namespace

TEST_CASE("clients with waiting requests take turns on the pool") {
  boost::asio::io_context io;
  pool::WorkerPool pool(io, fake_pool(1));
  pool.start();
  FairScheduler scheduler(io, pool);
  auto busy = scheduler.add_client();
  auto light = scheduler.add_client();
  std::vector<char> order;
  for (int i = 0; i < 8; ++i)
    scheduler.submit(busy, passing_request(), 10s, [&](pool::WorkerOutcome outcome) {
      CHECK(is_pass(outcome));
      order.push_back('b');
    });
  for (int i = 0; i < 2; ++i)
    scheduler.submit(light, passing_request(), 10s, [&](pool::WorkerOutcome outcome) {
      CHECK(is_pass(outcome));
      order.push_back('l');
    });
  while (order.size() < 10) REQUIRE(io.run_one_for(10s) != 0);
  // The busy client queued eight first; the light one still gets every other slot.
  CHECK(std::string(order.begin(), order.begin() + 4) == "blbl");
  CHECK(scheduler.waiting() == 0);
  bool stopped = false;
  pool.stop([&] { stopped = true; });
  while (!stopped) io.run_one_for(10s);
}

TEST_CASE("removing a client cancels what it has waiting") {
  boost::asio::io_context io;
  pool::WorkerPool pool(io, fake_pool(1));
  pool.start();
  FairScheduler scheduler(io, pool);
  auto client = scheduler.add_client();
  int passed = 0, cancelled = 0;
  for (int i = 0; i < 5; ++i)
    scheduler.submit(client, passing_request(), 10s, [&](pool::WorkerOutcome outcome) {
      if (is_pass(outcome)) ++passed;
      if (is_cancelled(outcome)) ++cancelled;
    });
  scheduler.remove_client(client);
  while (passed + cancelled < 5) REQUIRE(io.run_one_for(10s) != 0);
  CHECK(cancelled >= 4);
  CHECK(scheduler.clients() == 0);
  bool answered = false;
  scheduler.submit(client, passing_request(), 10s, [&](pool::WorkerOutcome outcome) { answered = is_cancelled(outcome); });
  while (!answered) REQUIRE(io.run_one_for(10s) != 0);
  bool stopped = false;
  pool.stop([&] { stopped = true; });
  while (!stopped) io.run_one_for(10s);
}

TEST_CASE("a job thread's requests are answered on its own io_context") {
  boost::asio::io_context daemon_io;
  auto guard = boost::asio::make_work_guard(daemon_io);
  pool::WorkerPool pool(daemon_io, fake_pool(2));
  FairScheduler scheduler(daemon_io, pool);
  std::thread daemon_thread([&] { daemon_io.run(); });
  boost::asio::post(daemon_io, [&] { pool.start(); });

  std::thread::id answered_on;
  int passes = 0;
  std::thread job([&] {
    SharedPoolClient client(daemon_io, scheduler, 2);
    pool::PoolAccess access = client.access();
    for (int i = 0; i < 3; ++i) {
      pool::WorkerOutcome outcome = pool::RequestBatch(access).ask(passing_request(), 10s);
      if (is_pass(outcome)) ++passes;
    }
    access.pool.submit(passing_request(), 10s, [&](pool::WorkerOutcome) { answered_on = std::this_thread::get_id(); });
    while (answered_on == std::thread::id()) access.io.run_one();
    CHECK(answered_on == std::this_thread::get_id());
  });
  job.join();
  CHECK(passes == 3);
  boost::asio::post(daemon_io, [&] { pool.stop([&] { guard.reset(); }); });
  daemon_thread.join();
}
