// The whole search on PyTorch's own minifier test cases (test/functorch/test_minifier.py and the
// dynamo minifier tests), expressed as the graphs make_fx writes, with the same predicates.
#include <atomic>

#include <catch2/catch.hpp>

#include "common/canonical_hash.h"
#include "common/graph_codec.h"
#include "tests/support/run_search.h"
#include "tests/support/search_case.h"

using namespace minifyd;
using namespace minifyd::search;
using namespace minifyd::search::test;

namespace {

// failing_f(x, y): y = y / 3; x = x + 3; x = x * y; return x + y
SearchState has_mul_case() {
  SearchCase c;
  Node* x = c.input("x_1");
  Node* y = c.input("y_1");
  Node* div = c.call("div", "aten::div.Tensor", {NodeRef{y}, 3});
  Node* add = c.call("add", "aten::add.Tensor", {NodeRef{x}, 3});
  Node* mul = c.call("mul", "aten::mul.Tensor", {NodeRef{add}, NodeRef{div}});
  Node* add_1 = c.call("add_1", "aten::add.Tensor", {NodeRef{mul}, NodeRef{div}});
  c.output(NodeRef{add_1});
  return c.build();
}

// f(a, b, c): a = a.sin(); c = c.cos(); d = a * c; return (a, b, c, d)
SearchState input_returned_case() {
  SearchCase c;
  Node* a = c.input("a_1");
  Node* b = c.input("b_1");
  Node* cc = c.input("c_1");
  Node* sin = c.call("sin", "aten::sin", {NodeRef{a}});
  Node* cos = c.call("cos", "aten::cos", {NodeRef{cc}});
  Node* mul = c.call("mul", "aten::mul.Tensor", {NodeRef{sin}, NodeRef{cos}});
  c.output_tuple({sin, b, cos, mul});
  return c.build();
}

// x = sin(x) twenty times, relu, cos(x) twenty times; the "backend" fails on relu.
SearchState relu_in_the_middle_case() {
  SearchCase c;
  Node* last = c.input("x_1");
  for (int i = 0; i < 20; ++i) last = c.call(i == 0 ? "sin" : "sin_" + std::to_string(i), "aten::sin", {NodeRef{last}});
  last = c.call("relu", "aten::relu", {NodeRef{last}});
  for (int i = 0; i < 20; ++i) last = c.call(i == 0 ? "cos" : "cos_" + std::to_string(i), "aten::cos", {NodeRef{last}});
  c.output(NodeRef{last});
  return c.build();
}

std::string encoded(const SearchResult& result) { return encode_graph_document(result.best.document).dump(); }

}  // namespace

TEST_CASE("test_has_mul_minifier", "[search]") {
  PredicateEvaluator evaluator(holds_target("aten::mul.Tensor"));
  SearchResult result = run_search(has_mul_case(), evaluator);
  CHECK(result.stop == StopReason::finished);
  CHECK(result.best.document.graph.size() == 4);
  CHECK(input_count(result.best) == 2);
  CHECK(node_names(result.best) == std::vector<std::string>{"div", "add", "mul", "output"});
  CHECK(result.best.loads.empty());
}

TEST_CASE("test_input_returned", "[search]") {
  PredicateEvaluator evaluator(returns_placeholder);
  SearchResult result = run_search(input_returned_case(), evaluator);
  CHECK(result.stop == StopReason::finished);
  CHECK(result.best.document.graph.size() == 2);
  CHECK(input_count(result.best) == 1);
}

TEST_CASE("test_tup_use", "[search]") {
  PredicateEvaluator evaluator(holds_target("aten::add.Tensor"));
  SearchResult result = run_search(tup_use_case(), evaluator);
  CHECK(result.stop == StopReason::finished);
  CHECK(result.best.document.graph.size() == 4);
  CHECK(input_count(result.best) == 2);
  CHECK(node_names(result.best) == std::vector<std::string>{"getitem", "mul", "add", "output"});
}

TEST_CASE("test_if_graph_minified", "[search]") {
  SearchState original = relu_in_the_middle_case();
  std::string sin_19_hash = original.eager->find("sin_19")->storage.hash;
  PredicateEvaluator evaluator(holds_target("aten::relu"));
  SearchResult result = run_search(std::move(original), evaluator);
  CHECK(result.start_nodes == 43);
  CHECK(result.stop == StopReason::finished);
  const SearchState& best = result.best;
  REQUIRE(best.document.graph.size() == 3);
  CHECK(input_count(best) == 1);
  Node* sin_19 = find_node(best, "sin_19");
  Node* relu = find_node(best, "relu");
  CHECK(sin_19->op() == OpCode::placeholder);
  CHECK(relu->args().size() == 1);
  CHECK(relu->input_nodes() == std::vector<Node*>{sin_19});
  CHECK(best.document.graph.output()->input_nodes() == std::vector<Node*>{relu});
  CHECK(best.document.storages.at(std::get<TensorMeta>(best.document.inputs.at(0)).storage).hash == sin_19_hash);
  CHECK(best.document.storages.size() == 1);
}

TEST_CASE("the result does not depend on parallelism or completion order", "[search]") {
  struct Case {
    SearchState (*build)();
    Predicate fails;
  };
  for (const Case& c : {Case{relu_in_the_middle_case, holds_target("aten::relu")},
                        Case{[] { return tup_use_case(); }, holds_target("aten::add.Tensor")},
                        Case{input_returned_case, returns_placeholder}}) {
    PredicateEvaluator sequential(c.fails);
    SearchResult reference = run_search(c.build(), sequential);
    for (unsigned seed : {0u, 1u, 7u}) {
      for (std::size_t parallelism : {2u, 4u, 16u}) {
        OutOfOrderEvaluator evaluator(c.fails, parallelism, seed);
        SearchResult result = run_search(c.build(), evaluator);
        CHECK(encoded(result) == encoded(reference));
        CHECK(result.best.loads == reference.best.loads);
        CHECK(result.counters.accepted == reference.counters.accepted);
        CHECK(result.counters.queries >= reference.counters.queries);
      }
    }
  }
}

TEST_CASE("no candidate is evaluated twice except to re-verify it", "[search]") {
  PredicateEvaluator evaluator(holds_target("aten::mul.Tensor"));
  SearchOptions options;
  options.runner.reverify = false;
  SearchResult result = run_search(has_mul_case(), evaluator, {}, options);
  CHECK(result.best.document.graph.size() == 4);
  std::vector<std::string> evaluated = evaluator.evaluated();
  // The sanity and final checks are fresh evaluations by design; the search's own are unique.
  std::vector<std::string> searched(evaluated.begin() + 1, evaluated.end() - 1);
  std::sort(searched.begin(), searched.end());
  CHECK(std::adjacent_find(searched.begin(), searched.end()) == searched.end());
  CHECK(result.counters.cache_hits == 2);  // delta debugging proposes mul's load again at G 2 and 1
  CHECK(result.counters.queries == evaluated.size());
}

// The final check asks whether the result still fails afresh: its re-verification, when it was the
// last graph asked, has just answered that, and is not asked again.
TEST_CASE("the final check is the result's re-verification when that was the last fresh question", "[search]") {
  auto times_evaluated = [](const PredicateEvaluator& evaluator, const SearchState& state) {
    const std::vector<std::string>& evaluated = evaluator.evaluated();
    return std::count(evaluated.begin(), evaluated.end(), canonical_hash(state.document));
  };
  PredicateEvaluator reverified(holds_target("aten::mul.Tensor"));
  SearchResult result = run_search(has_mul_case(), reverified);
  CHECK(result.best.document.graph.size() == 4);
  CHECK(times_evaluated(reverified, result.best) == 2);  // the candidate, its re-verification

  SearchOptions unverified;
  unverified.runner.reverify = false;
  PredicateEvaluator checked(holds_target("aten::mul.Tensor"));
  SearchResult reference = run_search(has_mul_case(), checked, {}, unverified);
  CHECK(times_evaluated(checked, reference.best) == 2);  // the candidate, the final check
  CHECK(checked.evaluated().back() == canonical_hash(reference.best.document));

  // Without re-verification, a result that passes when checked at the end is an error, not a result.
  std::size_t queries = 0;
  Predicate fails_until_the_end = [&, holds_mul = holds_target("aten::mul.Tensor")](const GraphDocument& document) {
    return ++queries < reference.counters.queries && holds_mul(document);
  };
  PredicateEvaluator flaky(fails_until_the_end);
  SearchResult refuted = run_search(has_mul_case(), flaky, {}, unverified);
  CHECK(refuted.stop == StopReason::error);
  REQUIRE(refuted.error.has_value());
  CHECK(refuted.error->message == "the final graph no longer fails");
}

TEST_CASE("a spent query budget ends the search with the best graph so far", "[search]") {
  PredicateEvaluator evaluator(holds_target("aten::relu"));
  SearchOptions options;
  options.runner.budget.max_queries = 6;
  SearchResult result = run_search(relu_in_the_middle_case(), evaluator, {}, options);
  CHECK(result.stop == StopReason::query_budget);
  CHECK(std::string(to_string(result.stop)) == "query budget spent");
  CHECK(result.counters.queries == 6);
  CHECK(result.best.document.graph.size() < 43);
  CHECK(holds_target("aten::relu")(result.best.document));
}

TEST_CASE("a spent time budget ends the search with the best graph so far", "[search]") {
  FakeClock clock;
  PredicateEvaluator evaluator(holds_target("aten::relu"));
  evaluator.on_query = [&] { clock.advance(std::chrono::seconds(1)); };
  SearchOptions options;
  options.runner.budget.max_time = std::chrono::seconds(10);
  SearchResult result = run_search(relu_in_the_middle_case(), evaluator, {}, options, &clock);
  CHECK(result.stop == StopReason::time_budget);
  CHECK(result.counters.queries == 10);
  CHECK(result.best.document.graph.size() < 43);
  CHECK(holds_target("aten::relu")(result.best.document));
}

TEST_CASE("max granularity caps the schedule and must be a power of two", "[search]") {
  PredicateEvaluator evaluator(holds_target("aten::relu"));
  SearchOptions options;
  options.max_granularity = 4;
  SearchResult capped = run_search(relu_in_the_middle_case(), evaluator, {}, options);
  CHECK(capped.best.document.graph.size() == 3);

  options.max_granularity = 6;
  options.strategies = *select_strategies({});
  VerdictCache cache("test");
  FakeClock clock;
  auto refused = minify(relu_in_the_middle_case(), evaluator, cache, clock, options);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().message == "max granularity 6 is not a power of two");
}

TEST_CASE("an original that does not fail ends the search at the sanity check", "[search]") {
  PredicateEvaluator evaluator(holds_target("aten::mm"));
  SearchOptions options;
  options.strategies = *select_strategies({});
  VerdictCache cache("test");
  FakeClock clock;
  SearchState original = has_mul_case();
  std::size_t nodes = original.document.graph.size();
  auto result = minify(std::move(original), evaluator, cache, clock, options);
  REQUIRE(result.has_value());
  CHECK(result->stop == StopReason::original_passes);
  CHECK(result->counters.queries == 1);
  CHECK(result->best.document.graph.size() == nodes);
}

TEST_CASE("a failure refuted while the search runs stops it before its next query", "[search]") {
  PredicateEvaluator evaluator(holds_target("aten::mul.Tensor"));
  SearchOptions options;
  options.strategies = *select_strategies({});
  std::atomic<bool> refuted{false};
  options.runner.refuted = &refuted;
  std::size_t queries = 0;
  evaluator.on_query = [&] {
    if (++queries == 3) refuted = true;
  };
  FakeClock clock;
  SearchState original = has_mul_case();
  VerdictCache cache("test");
  auto stopped = minify(search::clone_state(original), evaluator, cache, clock, options);
  REQUIRE(stopped.has_value());
  CHECK(stopped->stop == StopReason::unconfirmed);
  CHECK(nothing_to_minimize(stopped->stop));
  CHECK(stopped->counters.queries == 3);

  refuted = false;
  queries = 0;
  evaluator.on_query = nullptr;
  VerdictCache fresh("test");
  auto searched = minify(std::move(original), evaluator, fresh, clock, options);
  REQUIRE(searched.has_value());
  CHECK(searched->stop == StopReason::finished);
  CHECK(searched->counters.queries > 3);
}

TEST_CASE("observers see every step and every accepted reduction", "[search]") {
  struct Recorder final : SearchObserver {
    std::vector<std::string> steps;
    std::vector<std::size_t> accepted_nodes;
    void on_progress(const SearchProgress& progress) override {
      CHECK(progress.start_nodes == 7);
      steps.push_back(std::string(progress.strategy) + "/" + std::to_string(progress.granularity));
    }
    void on_accepted(const SearchState& state, const SearchProgress& progress) override {
      CHECK(progress.nodes == state.document.graph.size());
      accepted_nodes.push_back(state.document.graph.size());
    }
  } recorder;
  PredicateEvaluator evaluator(holds_target("aten::mul.Tensor"));
  SearchOptions options;
  options.strategies = *select_strategies({});
  VerdictCache cache("test");
  FakeClock clock;
  auto result = minify(has_mul_case(), evaluator, cache, clock, options, &recorder);
  REQUIRE(result.has_value());
  CHECK(recorder.accepted_nodes == std::vector<std::size_t>{6, 4});
  REQUIRE(recorder.steps.size() >= 4);
  CHECK(recorder.steps.front() == "eliminate-dead-code/4");
  CHECK(recorder.steps.back() == "remove-outputs/1");
}

TEST_CASE("a first try's end is tried right after the sanity check, and the result is never larger", "[search]") {
  struct Steps final : SearchObserver {
    std::vector<std::string> accepted;
    void on_progress(const SearchProgress&) override {}
    void on_accepted(const SearchState&, const SearchProgress& progress) override {
      accepted.emplace_back(progress.strategy);
    }
  };
  auto search = [](std::optional<std::string> first_try_end, Steps& steps) {
    PredicateEvaluator evaluator(holds_target("aten::relu"));
    SearchOptions options;
    options.strategies = *select_strategies({});
    options.first_try_end = std::move(first_try_end);
    VerdictCache cache("test");
    FakeClock clock;
    auto result = minify(relu_in_the_middle_case(), evaluator, cache, clock, options, &steps);
    REQUIRE(result.has_value());
    CHECK(result->stop == StopReason::finished);
    return std::move(*result);
  };
  Steps plain_steps;
  SearchResult plain = search(std::nullopt, plain_steps);
  CHECK(node_names(plain.best) == std::vector<std::string>{"sin_19", "relu", "output"});  // sin_19 a load

  Steps at_relu_steps;
  SearchResult at_relu = search("relu", at_relu_steps);
  REQUIRE_FALSE(at_relu_steps.accepted.empty());
  CHECK(at_relu_steps.accepted.front() == first_divergence_step);
  CHECK(encoded(at_relu) == encoded(plain));
  CHECK(at_relu.counters.queries < plain.counters.queries);

  // A cut that loses the failure costs one query and changes nothing else.
  Steps before_steps;
  SearchResult before = search("sin_5", before_steps);
  CHECK(before_steps.accepted == plain_steps.accepted);
  CHECK(encoded(before) == encoded(plain));
  CHECK(before.counters.queries == plain.counters.queries + 1);

  // A name the graph does not hold is passed over.
  Steps unknown_steps;
  SearchResult unknown = search("no_such_node", unknown_steps);
  CHECK(encoded(unknown) == encoded(plain));
  CHECK(unknown.counters.queries == plain.counters.queries);
}
