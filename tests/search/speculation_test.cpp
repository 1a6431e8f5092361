// Speculative lineages: slow failures (hangs) overlap, guesses that turn out wrong are dropped,
// and either way the search ends where the sequential one does, having reported the same steps.
#include <catch2/catch.hpp>

#include <atomic>
#include <thread>

#include "common/graph_codec.h"
#include "daemon/search/failing_segment.h"
#include "daemon/search/prefix_bisection.h"
#include "tests/support/delayed_evaluator.h"
#include "tests/support/run_search.h"
#include "tests/support/search_case.h"

using namespace minifyd;
using namespace minifyd::search;
using namespace minifyd::search::test;
using namespace std::chrono_literals;

namespace {

// A chain of 48 unary operators with one relu, the chain1000 cases in small.
SearchState chain_with_relu() {
  SearchCase c;
  Node* last = c.input("x");
  for (int i = 0; i < 48; ++i)
    last = c.call("op" + std::to_string(i), i == 29 ? "aten::relu" : (i % 2 == 0 ? "aten::sin" : "aten::cos"),
                  {NodeRef{last}});
  c.output(NodeRef{last});
  return c.build();
}

struct Recorder final : SearchObserver {
  std::vector<std::string> accepted;
  std::vector<std::string> not_reproduced;
  void on_accepted(const SearchState& state, const SearchProgress& progress) override {
    accepted.push_back(std::string(progress.strategy) + "/" + std::to_string(progress.granularity) + "/" +
                       std::to_string(state.document.graph.size()));
  }
  void on_not_reproduced(const SearchProgress& progress) override {
    not_reproduced.push_back(std::string(progress.strategy) + "/" + std::to_string(progress.granularity) + "/" +
                             std::to_string(progress.nodes));
  }
};

struct Run {
  SearchResult result;
  std::vector<std::string> accepted;
  std::vector<std::string> not_reproduced;
};

Run search_with(CandidateEvaluator& evaluator, std::optional<std::chrono::milliseconds> speculate_after,
                const std::atomic<bool>* interrupt = nullptr, std::optional<std::string> first_try_end = std::nullopt,
                bool bisect_prefix = false) {
  SearchOptions options;
  options.first_try_end = std::move(first_try_end);
  options.bisect_prefix = bisect_prefix;
  options.strategies = *select_strategies({});
  options.speculation.after = speculate_after;
  options.runner.interrupt = interrupt;
  VerdictCache cache("test");
  FakeClock clock;
  Recorder recorder;
  auto result = minify(chain_with_relu(), evaluator, cache, clock, options, &recorder);
  REQUIRE(result.has_value());
  return Run{std::move(*result), recorder.accepted, recorder.not_reproduced};
}

std::string encoded(const SearchResult& result) { return encode_graph_document(result.best.document).dump(); }

Delay slow_when(Predicate slow, std::chrono::milliseconds how_slow) {
  return [slow, how_slow](const GraphDocument& document) { return slow(document) ? how_slow : 0ms; };
}

// The speculative search ended where the sequential one did, having reported the same steps.
void check_same_as(const Run& speculative, const Run& reference) {
  CHECK(encoded(speculative.result) == encoded(reference.result));
  CHECK(speculative.result.best.loads == reference.result.best.loads);
  CHECK(speculative.accepted == reference.accepted);
  CHECK(speculative.not_reproduced == reference.not_reproduced);
}

// Every evaluation is counted once: on the path the search took, or as wasted speculation.
void check_every_evaluation_counted(const Run& speculative, const DelayedEvaluator& evaluator) {
  CHECK(speculative.result.counters.queries + speculative.result.counters.speculative_queries ==
        evaluator.evaluations());
}

}  // namespace

TEST_CASE("lineages run slow failures at once and end where the sequential search does", "[search]") {
  PredicateEvaluator sequential(holds_target("aten::relu"));
  Run reference = search_with(sequential, std::nullopt);
  REQUIRE(reference.result.best.document.graph.size() == 3);

  for (std::size_t parallelism : {1u, 3u}) {
    // A candidate holding the relu "hangs" for 300 ms; the others answer at once.
    DelayedEvaluator evaluator(holds_target("aten::relu"), slow_when(holds_target("aten::relu"), 300ms), parallelism);
    Run speculative = search_with(evaluator, 20ms);
    check_same_as(speculative, reference);
    CHECK(speculative.result.stop == StopReason::finished);
    CHECK(speculative.result.counters.accepted == reference.result.counters.accepted);
    CHECK(speculative.result.counters.lineages > 0);
    check_every_evaluation_counted(speculative, evaluator);
  }
}

TEST_CASE("a lineage past a slow sanity check makes the first try as the search would", "[search]") {
  PredicateEvaluator sequential(holds_target("aten::relu"));
  Run reference = search_with(sequential, std::nullopt, nullptr, "op29");
  REQUIRE_FALSE(reference.accepted.empty());
  CHECK(reference.accepted.front() == std::string(first_divergence_step) + "/1/32");
  // The original holds the relu, so its sanity check is slow and a lineage goes ahead of it.
  DelayedEvaluator evaluator(holds_target("aten::relu"), slow_when(holds_target("aten::relu"), 200ms), 1);
  Run speculative = search_with(evaluator, 20ms, nullptr, "op29");
  check_same_as(speculative, reference);
  CHECK(speculative.result.counters.lineages > 0);
}

TEST_CASE("a lineage past a failing segment or its re-verification narrows on as the search would", "[search]") {
  OutOfOrderEvaluator in_turn(holds_target("aten::relu"), min_parallelism_to_split, 0);
  Run reference = search_with(in_turn, std::nullopt, nullptr, std::nullopt, true);
  // 48 operators in four segments, the relu's 12 in four, its 3 alone.
  std::vector<std::string> rounds{std::string(failing_segment_step) + "/4/14",
                                  std::string(failing_segment_step) + "/4/5", std::string(failing_node_step) + "/3/3"};
  REQUIRE(reference.accepted.size() >= rounds.size());
  CHECK(std::vector<std::string>(reference.accepted.begin(), reference.accepted.begin() + 3) == rounds);
  DelayedEvaluator evaluator(holds_target("aten::relu"), slow_when(holds_target("aten::relu"), 200ms),
                             min_parallelism_to_split);
  Run speculative = search_with(evaluator, 20ms, nullptr, std::nullopt, true);
  check_same_as(speculative, reference);
  CHECK(speculative.result.counters.lineages > 0);
  check_every_evaluation_counted(speculative, evaluator);
}

TEST_CASE("a lineage that guessed wrong is stopped and its work counted as speculative", "[search]") {
  PredicateEvaluator sequential(holds_target("aten::relu"));
  Run reference = search_with(sequential, std::nullopt);
  // Now the passing candidates are the slow ones: every lineage started on them guesses wrong.
  DelayedEvaluator evaluator(holds_target("aten::relu"),
                             slow_when([](const GraphDocument& d) { return !holds_target("aten::relu")(d); }, 60ms), 1);
  Run speculative = search_with(evaluator, 10ms);
  // Stopped lineages re-verified passing candidates and saw them pass: no flaky failure to report.
  REQUIRE(reference.not_reproduced.empty());
  check_same_as(speculative, reference);
  CHECK(speculative.result.counters.lineages > 0);
  CHECK(speculative.result.counters.speculative_queries > 0);
  check_every_evaluation_counted(speculative, evaluator);
}

TEST_CASE("a flaky failure a lineage went ahead of is reported once, as the sequential search does", "[search]") {
  PredicateEvaluator plain(holds_target("aten::relu"));
  Run unflaky = search_with(plain, std::nullopt);
  REQUIRE_FALSE(unflaky.accepted.empty());
  // The first reduction's graph fails when first evaluated and passes ever after (on any thread).
  std::size_t flaky_nodes = std::stoul(unflaky.accepted.front().substr(unflaky.accepted.front().rfind('/') + 1));
  auto flaky = [flaky_nodes] {
    auto seen = std::make_shared<std::atomic<bool>>(false);
    return [seen, flaky_nodes](const GraphDocument& document) {
      if (!holds_target("aten::relu")(document)) return false;
      return document.graph.size() != flaky_nodes || !seen->exchange(true);
    };
  };
  PredicateEvaluator sequential(flaky());
  Run reference = search_with(sequential, std::nullopt);
  REQUIRE(reference.not_reproduced.size() == 1);
  // The flaky graph holds the relu, so it is slow: a lineage goes ahead of its re-verification,
  // which rejects it; the warning comes up from that lineage alone.
  DelayedEvaluator evaluator(flaky(), slow_when(holds_target("aten::relu"), 200ms), 1);
  Run speculative = search_with(evaluator, 20ms);
  check_same_as(speculative, reference);
}

TEST_CASE("an interrupt stops the search and every lineage while candidates hang", "[search]") {
  // Failing candidates take far longer than the test may: only the interrupt can end it.
  DelayedEvaluator evaluator(holds_target("aten::relu"), slow_when(holds_target("aten::relu"), 600s), 1);
  std::atomic<bool> interrupt{false};
  std::thread interrupter([&] {
    std::this_thread::sleep_for(300ms);
    interrupt = true;
  });
  Run interrupted = search_with(evaluator, 20ms, &interrupt);
  interrupter.join();
  CHECK(interrupted.result.stop == StopReason::interrupted);
  CHECK(interrupted.result.best.document.graph.size() == 50);  // nothing was confirmed
  CHECK(interrupted.accepted.empty());
}

TEST_CASE("an evaluator that cannot be shared searches sequentially", "[search]") {
  PredicateEvaluator sequential(holds_target("aten::relu"));
  Run reference = search_with(sequential, std::nullopt);
  PredicateEvaluator unshareable(holds_target("aten::relu"));
  Run run = search_with(unshareable, 1ms);
  CHECK(encoded(run.result) == encoded(reference.result));
  CHECK(run.result.counters.lineages == 0);
  CHECK(run.result.counters.queries == reference.result.counters.queries);
}

// A parent waiting for its lineage (or a search for the original's eager values) is woken when it
// ends, not at the wait's next deadline; a wake with no wait under way ends the next one at once.
TEST_CASE("a wake ends a mailbox's wait at once, from another thread or before the wait", "[search]") {
  ResultMailbox mailbox;
  auto returns_at_once = [&] {
    auto started = std::chrono::steady_clock::now();
    bool woken = mailbox.deliver_until(started + 20s);
    return woken && std::chrono::steady_clock::now() - started < 10s;
  };
  mailbox.wake();
  CHECK(returns_at_once());
  CHECK_FALSE(mailbox.deliver_until(std::chrono::steady_clock::now() + 20ms));  // one wake, one wait
  std::thread waker([&] {
    std::this_thread::sleep_for(50ms);
    mailbox.wake();
  });
  CHECK(returns_at_once());
  waker.join();
}
