// The step runner: first failing candidate in proposal order whatever the completion order,
// invalid candidates never evaluated, the verdict cache, budgets, candidates released once passed, and its one hook for work ahead.
#include <catch2/catch.hpp>

#include "common/canonical_hash.h"
#include "daemon/search/search_runner.h"
#include "tests/support/delayed_evaluator.h"
#include "tests/support/fake_evaluators.h"
#include "tests/support/search_case.h"

using namespace minifyd;
using namespace minifyd::search;
using namespace minifyd::search::test;

namespace {

const char* const unary_ops[] = {"aten::sin", "aten::cos", "aten::tan", "aten::exp", "aten::relu", "aten::tanh"};

// x feeding six different operators, all returned.
SearchState fan_out() {
  SearchCase c;
  Node* x = c.input("x");
  std::vector<Node*> returned;
  for (int i = 0; i < 6; ++i) returned.push_back(c.call("op" + std::to_string(i), unary_ops[i], {NodeRef{x}}));
  c.output_tuple(returned);
  return c.build();
}

// Candidate k: the graph without op k (so six candidates, each with fewer nodes).
void propose_without_each_op(const SearchState& state, std::size_t, const CandidateSink& offer) {
  for (int k = 0; k < 6; ++k) {
    SearchState candidate = clone_state(state);
    Graph& graph = candidate.document.graph;
    Node* dropped = graph.find("op" + std::to_string(k));
    ListValue kept{{}, true};
    for (Node* node : graph.nodes())
      if (node->op() == OpCode::call_function && node != dropped) kept.items.emplace_back(NodeRef{node});
    graph.set_args(graph.output(), {kept});
    REQUIRE(graph.erase_node(dropped).has_value());
    if (!offer(std::move(candidate))) return;
  }
}

const Strategy without_each_op{"without-each-op", StrategyRole::granular, propose_without_each_op, ""};

// Fails when op2 (tan) or op4 (relu) is gone: candidates 2 and 4 fail, 2 first.
bool lacks_tan_or_relu(const GraphDocument& document) {
  return !holds_target("aten::tan")(document) || !holds_target("aten::relu")(document);
}

RunnerOptions no_reverify() {
  RunnerOptions options;
  options.reverify = false;
  return options;
}

// A runner over a verdict cache of its own and a fake clock (members constructed before the runner that
// refers to them), sized for `state`.
struct RunnerParts {
  VerdictCache cache{"test"};
  FakeClock clock;
};
struct TestRunner : RunnerParts, SearchRunner {
  TestRunner(CandidateEvaluator& evaluator, const SearchState& state, RunnerOptions options = RunnerOptions{})
      : SearchRunner(evaluator, cache, clock, std::move(options), state.document.graph.size()) {}
};

}  // namespace

TEST_CASE("the first failing candidate in proposal order wins whatever the completion order", "[search]") {
  SearchState state = fan_out();
  for (unsigned seed : {0u, 1u, 2u, 3u, 4u}) {
    for (std::size_t parallelism : {2u, 3u, 8u}) {
      OutOfOrderEvaluator evaluator(lacks_tan_or_relu, parallelism, seed);
      TestRunner runner(evaluator, state, no_reverify());
      std::optional<SearchState> accepted = runner.run_step(without_each_op, state, 1);
      REQUIRE(accepted.has_value());
      CHECK(accepted->document.graph.find("op2") == nullptr);
      CHECK(accepted->document.graph.find("op4") != nullptr);
      CHECK(evaluator.max_pending() <= parallelism);
      // Everything before the winner was judged; nothing beyond the window was started.
      CHECK(runner.counters().queries >= 3);
      CHECK(runner.counters().queries <= 3 + parallelism - 1);
    }
  }
}

TEST_CASE("a sequential evaluator stops at the first failing candidate", "[search]") {
  SearchState state = fan_out();
  PredicateEvaluator evaluator(lacks_tan_or_relu);
  TestRunner runner(evaluator, state);
  std::optional<SearchState> accepted = runner.run_step(without_each_op, state, 1);
  REQUIRE(accepted.has_value());
  CHECK(accepted->document.graph.find("op2") == nullptr);
  CHECK(runner.counters().queries == 4);  // candidates 0, 1, 2 and the re-verification of 2
  CHECK(runner.counters().accepted == 1);
}

TEST_CASE("a step keeps no candidate it is past: each one known to pass is released", "[search]") {
  SearchState state = fan_out();
  // Judging candidate k, the step is past candidates 0 .. k-1, all passing: their graphs are gone
  // (a step of hundreds of candidates of a big graph held them all until its end before).
  std::vector<const GraphDocument*> judged;
  std::vector<std::size_t> nodes_left_before;
  PredicateEvaluator evaluator([&](const GraphDocument& document) {
    std::size_t left = 0;
    for (const GraphDocument* earlier : judged) left += earlier->graph.size();
    nodes_left_before.push_back(left);
    judged.push_back(&document);
    return lacks_tan_or_relu(document);
  });
  TestRunner runner(evaluator, state, no_reverify());
  std::optional<SearchState> accepted = runner.run_step(without_each_op, state, 1);
  REQUIRE(accepted.has_value());
  CHECK(accepted->document.graph.find("op2") == nullptr);
  CHECK(nodes_left_before == std::vector<std::size_t>{0, 0, 0});
}

TEST_CASE("candidates that fail lint or document checks are never evaluated", "[search]") {
  SearchState state = fan_out();
  const Strategy broken{"broken", StrategyRole::granular,
                        [](const SearchState& current, std::size_t, const CandidateSink& offer) {
                          SearchState no_output = clone_state(current);
                          Graph& graph = no_output.document.graph;
                          graph.set_args(graph.output(), {NoneValue{}});
                          REQUIRE(graph.erase_node(graph.output()).has_value());
                          REQUIRE(graph.erase_node(graph.find("op5")).has_value());
                          offer(std::move(no_output));
                          SearchState extra_input = clone_state(current);
                          extra_input.document.inputs.push_back(extra_input.document.inputs.front());
                          Graph& graph2 = extra_input.document.graph;
                          graph2.set_args(graph2.output(), {NodeRef{graph2.find("op0")}});
                          offer(std::move(extra_input));
                          propose_without_each_op(current, 1, offer);
                        },
                        ""};
  PredicateEvaluator evaluator([](const GraphDocument& document) {
    CHECK(document_problems(document).empty());
    return true;
  });
  TestRunner runner(evaluator, state, no_reverify());
  std::optional<SearchState> accepted = runner.run_step(broken, state, 1);
  REQUIRE(accepted.has_value());
  CHECK(accepted->document.graph.find("op0") == nullptr);
  CHECK(runner.counters().invalid_candidates == 2);
  CHECK(evaluator.evaluated().size() == 1);
}

TEST_CASE("a candidate already judged is answered by the cache", "[search]") {
  SearchState state = fan_out();
  PredicateEvaluator evaluator(lacks_tan_or_relu);
  TestRunner runner(evaluator, state);
  REQUIRE(runner.run_step(without_each_op, state, 1).has_value());
  CHECK(evaluator.evaluated().size() == 4);
  REQUIRE(runner.run_step(without_each_op, state, 1).has_value());
  // The second time every candidate is known; only the re-verification runs.
  CHECK(evaluator.evaluated().size() == 5);
  CHECK(runner.counters().cache_hits == 3);

  // A cache is per evaluation key: another backend or check starts afresh.
  VerdictCache other("other backend");
  runner.cache.store("h", true);
  CHECK(runner.cache.find("h") == std::optional<bool>(true));
  CHECK_FALSE(other.find("h").has_value());
}

TEST_CASE("a candidate that passes on re-verification is not applied", "[search]") {
  SearchState state = fan_out();
  int judged = 0;
  // Fails the first time it sees a graph without tan, passes ever after: a flaky failure.
  PredicateEvaluator evaluator([&](const GraphDocument& document) {
    return !holds_target("aten::tan")(document) && ++judged == 1;
  });
  VerdictCache cache("test");
  FakeClock clock;
  struct : SearchObserver {
    std::vector<std::string> not_reproduced;
    void on_not_reproduced(const SearchProgress& progress) override {
      not_reproduced.push_back(std::string(progress.strategy));
    }
  } observer;
  SearchRunner runner(evaluator, cache, clock, RunnerOptions{}, state.document.graph.size(), &observer);
  CHECK_FALSE(runner.run_step(without_each_op, state, 1).has_value());
  CHECK(runner.counters().accepted == 0);
  CHECK(runner.counters().queries == 4);
  CHECK(observer.not_reproduced == std::vector<std::string>{std::string(without_each_op.name)});
}

TEST_CASE("the query budget stops proposing and evaluating", "[search]") {
  SearchState state = fan_out();
  PredicateEvaluator evaluator(lacks_tan_or_relu);
  RunnerOptions options;
  options.budget.max_queries = 2;
  TestRunner runner(evaluator, state, options);
  CHECK_FALSE(runner.run_step(without_each_op, state, 1).has_value());
  CHECK(runner.stop_reason() == StopReason::query_budget);
  CHECK(evaluator.evaluated().size() == 2);
  CHECK_FALSE(runner.check(state).has_value());
}

TEST_CASE("the time budget is read from the injected clock", "[search]") {
  SearchState state = fan_out();
  FakeClock clock;
  PredicateEvaluator evaluator(lacks_tan_or_relu);
  evaluator.on_query = [&] { clock.advance(std::chrono::seconds(1)); };
  VerdictCache cache("test");
  RunnerOptions options;
  options.budget.max_time = std::chrono::seconds(2);
  SearchRunner runner(evaluator, cache, clock, options, state.document.graph.size());
  CHECK_FALSE(runner.run_step(without_each_op, state, 1).has_value());
  CHECK(runner.stop_reason() == StopReason::time_budget);
  CHECK(evaluator.evaluated().size() == 2);
}

TEST_CASE("an evaluator error stops the search with the error", "[search]") {
  struct BrokenEvaluator final : CandidateEvaluator {
    std::size_t parallelism() const override { return 1; }
    void evaluate(std::vector<Candidate> batch, ResultCallback on_result) override {
      for (std::size_t i = 0; i < batch.size(); ++i) on_result(i, make_error(ErrorKind::io, "worker pipe closed"));
    }
    void wait() override {}
    void cancel_pending() override {}
  } evaluator;
  SearchState state = fan_out();
  TestRunner runner(evaluator, state);
  CHECK_FALSE(runner.run_step(without_each_op, state, 1).has_value());
  CHECK(runner.stop_reason() == StopReason::error);
  REQUIRE(runner.error().has_value());
  CHECK(runner.error()->message == "worker pipe closed");
}

TEST_CASE("a slow front is reported to the lookahead, whose outcome is the search's when it fails", "[search]") {
  // Stands in for speculation: notes the pending front, and "searched ahead" to it when it fails.
  struct AheadOfFront final : Lookahead {
    std::optional<SearchState> front;
    std::optional<Acceptance> acceptance;
    std::size_t failed = 0;
    void front_pending(const SearchRunner&, const Front& pending) override {
      front = clone_state(pending.state);
      acceptance = pending.acceptance;
    }
    SearchCounters front_passed() override {
      front.reset();
      return {};
    }
    std::optional<SearchOutcome> front_failed(const SearchRunner& runner, EventSink&) override {
      ++failed;
      SearchOutcome outcome;
      outcome.best = clone_state(*front);
      outcome.counters = runner.counters();
      return outcome;
    }
  } ahead;
  SearchState state = fan_out();
  // Only the failing candidates (without tan or relu) are slow.
  DelayedEvaluator evaluator(
      lacks_tan_or_relu,
      [](const GraphDocument& document) {
        return lacks_tan_or_relu(document) ? std::chrono::milliseconds(100) : std::chrono::milliseconds(0);
      },
      1);
  TestRunner runner(evaluator, state);
  runner.look_ahead_with(ahead);
  CHECK_FALSE(runner.run_step(without_each_op, state, 1).has_value());
  REQUIRE(ahead.front.has_value());
  CHECK(ahead.front->document.graph.find("op2") == nullptr);  // candidate 2, the first that fails
  REQUIRE(ahead.acceptance.has_value());
  CHECK(ahead.acceptance->strategy == without_each_op.name);
  CHECK(ahead.failed == 1);
  CHECK(runner.handed_over());
  CHECK(runner.stopped());
  CHECK(runner.counters().queries == 3);  // no re-verification: the work ahead did it
  std::optional<SearchState> best = runner.outcome(std::nullopt).best;
  REQUIRE(best.has_value());
  CHECK(best->document.graph.find("op2") == nullptr);
}
