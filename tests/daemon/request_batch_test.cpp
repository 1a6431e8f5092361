// RequestBatch on a WorkerPool of fake workers: a batch waits for all of its answers, asks one, and
// its end or cancel_all() cancels what is left without ever running an answer that came too late.
#include <catch2/catch.hpp>

#include <optional>

#include <boost/asio/io_context.hpp>

#include "daemon/pool/request_batch.h"
#include "daemon/pool/worker_pool.h"
#include "tests/support/fake_pool.h"

using namespace minifyd;
using namespace std::chrono_literals;
using test::fake_pool;
using test::passed;
using test::scripted;

namespace {

struct StoppedAtEnd {
  boost::asio::io_context& io;
  pool::WorkerPool& pool;
  ~StoppedAtEnd() {
    bool stopped = false;
    pool.stop([&] { stopped = true; });
    while (!stopped && io.run_one() != 0) {
    }
  }
};

}  // namespace

TEST_CASE("a batch waits for every answer and asks one request", "[request_batch]") {
  boost::asio::io_context io;
  pool::WorkerPool pool(io, fake_pool(2));
  StoppedAtEnd stop{io, pool};
  pool.start();
  pool::RequestBatch batch(pool::PoolAccess{io, pool, 2});
  int passes = 0;
  for (int i = 0; i < 5; ++i)
    batch.submit(scripted(""), 10s, [&](pool::WorkerOutcome outcome) { passes += passed(outcome) ? 1 : 0; });
  CHECK(batch.unanswered() == 5);
  CHECK(batch.wait());
  CHECK(passes == 5);
  CHECK(batch.unanswered() == 0);
  CHECK(passed(batch.ask(scripted(""), 10s)));
}

// A pool of one fake worker that says when a request is sent to it.
pool::PoolConfig telling_pool(std::size_t& sent) {
  pool::PoolConfig config = fake_pool(1, false);
  config.on_event = [&sent](const pool::PoolEvent& event) {
    if (event.kind == pool::PoolEvent::Kind::request_sent) ++sent;
  };
  return config;
}

TEST_CASE("a batch's end cancels its running request and drops its answer", "[request_batch]") {
  boost::asio::io_context io;
  std::size_t sent = 0;
  pool::WorkerPool pool(io, telling_pool(sent));
  StoppedAtEnd stop{io, pool};
  pool.start();
  bool late_answer = false;
  {
    pool::RequestBatch hung(pool::PoolAccess{io, pool, 1});
    hung.submit(scripted("!sleep 10000"), 60s, [&](pool::WorkerOutcome) { late_answer = true; });
    REQUIRE(hung.run_while([&] { return sent == 0; }));
  }
  // The one slot serves the next batch at once: the hung request was killed, not waited out.
  auto begin = std::chrono::steady_clock::now();
  CHECK(passed(pool::RequestBatch(pool::PoolAccess{io, pool, 1}).ask(scripted(""), 30s)));
  CHECK(std::chrono::steady_clock::now() - begin < 8s);
  CHECK_FALSE(late_answer);
}

TEST_CASE("cancel_queued answers with a cancelled fault, and cancel_all drops what is running", "[request_batch]") {
  boost::asio::io_context io;
  std::size_t sent = 0;
  pool::WorkerPool pool(io, telling_pool(sent));
  StoppedAtEnd stop{io, pool};
  pool.start();
  pool::RequestBatch batch(pool::PoolAccess{io, pool, 1});
  bool running_answered = false;
  std::optional<pool::WorkerOutcome> queued_answer;
  batch.submit(scripted("!sleep 10000"), 60s, [&](pool::WorkerOutcome) { running_answered = true; });
  auto queued = batch.submit(scripted(""), 60s, [&](pool::WorkerOutcome outcome) { queued_answer = std::move(outcome); });
  REQUIRE(batch.run_while([&] { return sent == 0; }));
  CHECK(batch.cancel_queued(queued));
  REQUIRE(batch.run_while([&] { return !queued_answer; }));
  CHECK(std::get<pool::WorkerFault>(*queued_answer).kind == pool::WorkerFault::Kind::cancelled);
  CHECK(batch.unanswered() == 1);
  batch.cancel_all();
  CHECK(batch.unanswered() == 0);
  CHECK(batch.wait());
  auto begin = std::chrono::steady_clock::now();
  CHECK(passed(batch.ask(scripted(""), 30s)));
  CHECK(std::chrono::steady_clock::now() - begin < 8s);
  CHECK_FALSE(running_answered);
}
