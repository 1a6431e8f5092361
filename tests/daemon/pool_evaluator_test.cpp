// The search's evaluator on a real pool of fake workers: verdicts judged against the original's
// signature, and abandoned evaluations cancelled without leaking a worker or calling back.
#include <catch2/catch.hpp>

#include <boost/asio/io_context.hpp>

#include "common/graph_codec.h"
#include "daemon/pool/worker_pool.h"
#include "daemon/run/candidate_timeout.h"
#include "daemon/run/pool_evaluator.h"
#include "tests/support/fake_pool.h"
#include "tests/support/sample_documents.h"

using namespace minifyd;
using namespace std::chrono_literals;
using test::fake_pool;

namespace {

// The fake worker plays the backend option "fake" instead of running the graph.
verdict::EvaluationSpec scripted(const std::string& script) {
  verdict::EvaluationSpec spec;
  spec.backend = "eager";
  if (!script.empty()) spec.backend_options["fake"] = script;
  spec.timeout = 30s;
  return spec;
}

std::vector<search::Candidate> candidates(const std::vector<std::string>& hashes) {
  auto document = decode_graph_document(test::sample_document());
  REQUIRE(document.has_value());
  auto shared = std::make_shared<const GraphDocument>(std::move(*document));
  std::vector<search::Candidate> batch;
  for (const std::string& hash : hashes) batch.push_back(search::Candidate{shared, hash});
  return batch;
}

// Evaluates candidates with these hashes and waits for every verdict, by candidate index.
std::map<std::size_t, bool> evaluate_all(run::PoolEvaluator& evaluator, const std::vector<std::string>& hashes) {
  std::map<std::size_t, bool> results;
  evaluator.evaluate(candidates(hashes), [&](std::size_t index, const search::EvaluationResult& fails) {
    REQUIRE(fails.has_value());
    results[index] = *fails;
  });
  while (results.size() < hashes.size()) evaluator.wait();
  return results;
}

void run_for(boost::asio::io_context& io, std::chrono::milliseconds duration) {
  io.restart();
  io.run_for(duration);
}

}  // namespace

TEST_CASE("the original's verdict sets the signature the others must match", "[pool_evaluator]") {
  boost::asio::io_context io;
  pool::WorkerPool pool(io, fake_pool(1));
  pool.start();
  verdict::FailureJudge judge(verdict::FailureCheck(), verdict::MatchMode::same);
  {
    run::PoolEvaluator segfaults(pool::PoolAccess{io, pool, 1}, scripted("!signal SEGV"), "/tmp", judge, "original", false);
    CHECK(evaluate_all(segfaults, {"original", "smaller"}) == std::map<std::size_t, bool>{{0, true}, {1, true}});
    REQUIRE(judge.expected().has_value());
    CHECK(describe(*judge.expected()) == "crash (SIGSEGV)");
    CHECK(segfaults.tally().failed == 2);
  }
  run::PoolEvaluator aborts(pool::PoolAccess{io, pool, 1}, scripted("!signal ABRT"), "/tmp", judge, "original", false);
  CHECK(evaluate_all(aborts, {"other"}) == std::map<std::size_t, bool>{{0, false}});
  CHECK(aborts.tally().other_failures == 1);
  CHECK(aborts.tally().failures_by_kind.at("crash") == 1);
  bool stopped = false;
  pool.stop([&] { stopped = true; });
  run_for(io, 5s);
  CHECK(stopped);
}

TEST_CASE("cancelled evaluations never call back and leave the pool whole", "[pool_evaluator]") {
  boost::asio::io_context io;
  pool::WorkerPool pool(io, fake_pool(2));
  pool.start();
  verdict::FailureJudge judge(verdict::FailureCheck(), verdict::MatchMode::any);
  int hang_callbacks = 0;
  {
    run::PoolEvaluator hangs(pool::PoolAccess{io, pool, 2}, scripted("!hang"), "/tmp", judge, "original", false);
    hangs.evaluate(candidates({"a", "b", "c"}), [&](std::size_t, const search::EvaluationResult&) { ++hang_callbacks; });
    run_for(io, 1500ms);  // workers up, two hangs running, one queued
    hangs.cancel_pending();
    run_for(io, 2s);  // the queued one dropped at once, the running ones killed after the grace period
    CHECK(pool.stats().cancelled == 3);
    CHECK(hang_callbacks == 0);
  }
  run::PoolEvaluator passes(pool::PoolAccess{io, pool, 2}, scripted(""), "/tmp", judge, "original", false);
  CHECK(evaluate_all(passes, {"d", "e"}) == std::map<std::size_t, bool>{{0, false}, {1, false}});
  CHECK(hang_callbacks == 0);
  bool stopped = false;
  pool.stop([&] { stopped = true; });
  run_for(io, 5s);
  CHECK(stopped);
}

TEST_CASE("candidates' time limit follows the original's measured time", "[pool_evaluator]") {
  CHECK(run::timeout_following_original(1s, 600s) == run::timeout_floor);
  CHECK(run::timeout_following_original(30s, 600s) == 120s);
  CHECK(run::timeout_following_original(300s, 600s) == 600s);
  CHECK(run::timeout_following_original(30s, 60s) == 60s);

  boost::asio::io_context io;
  pool::WorkerPool pool(io, fake_pool(1));
  pool.start();
  verdict::FailureJudge judge(verdict::FailureCheck(), verdict::MatchMode::same);
  verdict::EvaluationSpec spec = scripted("!signal SEGV");
  spec.timeout = 600s;
  {
    run::PoolEvaluator fixed(pool::PoolAccess{io, pool, 1}, spec, "/tmp", judge, "original", false);
    evaluate_all(fixed, {"original"});
    CHECK(fixed.timeout() == 600s);
  }
  run::PoolEvaluator following(pool::PoolAccess{io, pool, 1}, spec, "/tmp", judge, "original", true);
  CHECK(following.timeout() == 600s);  // until the original's verdict
  evaluate_all(following, {"original", "smaller"});
  // The fake worker's segfault takes milliseconds: the floor.
  CHECK(following.timeout() == run::timeout_floor);
  bool stopped = false;
  pool.stop([&] { stopped = true; });
  run_for(io, 5s);
  CHECK(stopped);
}
