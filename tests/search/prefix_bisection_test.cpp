// The search's first cuts, the failing segments (search/failing_segment.h) and the prefix bisection
// (search/prefix_bisection.h): what they find, what they cost, and that whatever the failure's shape
// their result is the schedule's, or no larger.
#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "common/graph_codec.h"
#include "daemon/search/failing_segment.h"
#include "daemon/search/prefix_bisection.h"
#include "daemon/search/strategies/truncate_suffix.h"
#include "tests/support/run_search.h"
#include "tests/support/search_case.h"

using namespace minifyd;
using namespace minifyd::search;
using namespace minifyd::search::test;

namespace {

// `length` operators in a line from one input: sin, except `special` (index -> target).
SearchState chain_case(int length, const std::vector<std::pair<int, std::string>>& special) {
  SearchCase c;
  Node* last = c.input("x_1");
  for (int i = 0; i < length; ++i) {
    std::string target = "aten::sin";
    for (const auto& [at, named] : special)
      if (at == i) target = named;
    last = c.call("op_" + std::to_string(i), target, {NodeRef{last}});
  }
  c.output(NodeRef{last});
  return c.build();
}

struct Steps final : SearchObserver {
  std::vector<std::string> accepted;
  void on_progress(const SearchProgress&) override {}
  void on_accepted(const SearchState&, const SearchProgress& progress) override {
    accepted.emplace_back(progress.strategy);
  }
};

struct Searched {
  SearchResult result;
  std::vector<std::string> accepted;
};

Searched minified(const SearchState& original, CandidateEvaluator& evaluator, bool bisect,
                  std::optional<std::string> first_try_end = std::nullopt,
                  std::optional<std::vector<std::string>> failing_kernel = std::nullopt) {
  SearchOptions options;
  options.strategies = *select_strategies({});
  options.bisect_prefix = bisect;
  options.first_try_end = std::move(first_try_end);
  if (failing_kernel) options.failing_kernel_nodes = [nodes = *failing_kernel] { return nodes; };
  VerdictCache cache("test");
  FakeClock clock;
  Steps steps;
  auto result = minify(clone_state(original), evaluator, cache, clock, options, &steps);
  REQUIRE(result.has_value());
  CHECK(result->stop == StopReason::finished);
  CHECK(document_problems(result->best.document).empty());
  return Searched{std::move(*result), std::move(steps.accepted)};
}

std::string encoded(const SearchResult& result) { return encode_graph_document(result.best.document).dump(); }

Predicate holds_both(std::string first, std::string second) {
  return [a = holds_target(std::move(first)), b = holds_target(std::move(second))](const GraphDocument& document) {
    return a(document) && b(document);
  };
}

}  // namespace

TEST_CASE("the bisection reaches a failing operator in a few queries and ends where the schedule ends", "[search]") {
  SearchState original = chain_case(200, {{120, "aten::relu"}});
  PredicateEvaluator sequential(holds_target("aten::relu"));
  Searched schedule = minified(original, sequential, false);
  PredicateEvaluator bisecting(holds_target("aten::relu"));
  Searched bisected = minified(original, bisecting, true);
  REQUIRE_FALSE(bisected.accepted.empty());
  CHECK(bisected.accepted.front() == failing_node_step);
  CHECK(encoded(bisected.result) == encoded(schedule.result));
  CHECK(bisected.result.best.loads == schedule.result.best.loads);
  // log2(200) probes, the node alone and its re-verification, the schedule's end on three nodes.
  CHECK(bisected.result.counters.queries <= 16);
  CHECK(schedule.result.counters.queries >= 2 * bisected.result.counters.queries);
  // With more candidates at once (fewer than split into segments), fewer rounds and the same result.
  for (unsigned seed : {0u, 3u}) {
    for (std::size_t parallelism : {2u, 3u}) {
      OutOfOrderEvaluator parallel(holds_target("aten::relu"), parallelism, seed);
      Searched result = minified(original, parallel, true);
      CHECK(encoded(result.result) == encoded(schedule.result));
      CHECK(result.accepted == bisected.accepted);
    }
  }
}

TEST_CASE("a failure that needs two operators apart is cut after the second, never larger than the schedule's",
          "[search]") {
  SearchState original = chain_case(60, {{20, "aten::relu"}, {41, "aten::cos"}});
  Predicate fails = holds_both("aten::relu", "aten::cos");
  PredicateEvaluator sequential(fails);
  Searched schedule = minified(original, sequential, false);
  PredicateEvaluator bisecting(fails);
  Searched bisected = minified(original, bisecting, true);
  REQUIRE_FALSE(bisected.accepted.empty());
  CHECK(bisected.accepted.front() == failing_prefix_step);  // the cos alone holds no relu
  CHECK(bisected.result.best.document.graph.size() <= schedule.result.best.document.graph.size());
  CHECK(fails(bisected.result.best.document));
}

TEST_CASE("a failure no cut shows: the last node alone, else the probes' cost and nothing else", "[search]") {
  // The failure is the last operator's: no cut shows it, and the last node alone does.
  SearchState ends_in_tanh = chain_case(40, {{39, "aten::tanh"}});
  PredicateEvaluator sequential(holds_target("aten::tanh"));
  Searched schedule = minified(ends_in_tanh, sequential, false);
  PredicateEvaluator bisecting(holds_target("aten::tanh"));
  Searched bisected = minified(ends_in_tanh, bisecting, true);
  CHECK(bisected.accepted == std::vector<std::string>{std::string(failing_node_step)});
  CHECK(bisected.result.best.document.graph.size() == schedule.result.best.document.graph.size());

  // The failure needs both returned values: every probe and the last node alone pass.
  SearchCase c;
  Node* last = c.input("x_1");
  Node* early = nullptr;
  for (int i = 0; i < 40; ++i) {
    last = c.call("op_" + std::to_string(i), "aten::sin", {NodeRef{last}});
    if (i == 10) early = last;
  }
  c.output_tuple({early, last});
  SearchState two_outputs = c.build();
  auto returns_two = [](const GraphDocument& document) {
    std::size_t count = 0;
    for_each_node_ref(document.graph.output()->args()[0], [&](Node*) { ++count; });
    return count >= 2;
  };
  PredicateEvaluator plain(returns_two);
  Searched plain_schedule = minified(two_outputs, plain, false);
  PredicateEvaluator probing(returns_two);
  Searched probed = minified(two_outputs, probing, true);
  CHECK(encoded(probed.result) == encoded(plain_schedule.result));
  CHECK(probed.accepted == plain_schedule.accepted);
  // ceil(log2(41)) probes at most, and the last node alone.
  CHECK(probed.result.counters.queries > plain_schedule.result.counters.queries);
  CHECK(probed.result.counters.queries <= plain_schedule.result.counters.queries + 7);
}

TEST_CASE("a graph with few cut points is left to the schedule", "[search]") {
  SearchState original = chain_case(static_cast<int>(min_cut_points_to_bisect) - 2, {{3, "aten::relu"}});
  PredicateEvaluator sequential(holds_target("aten::relu"));
  Searched schedule = minified(original, sequential, false);
  PredicateEvaluator bisecting(holds_target("aten::relu"));
  Searched bisected = minified(original, bisecting, true);
  CHECK(bisected.accepted == schedule.accepted);
  CHECK(bisected.result.counters.queries == schedule.result.counters.queries);
}

TEST_CASE("after the first divergence's cut only its last node alone is tried", "[search]") {
  SearchState original = chain_case(200, {{120, "aten::relu"}});
  auto with_first_end = [&](bool bisect) {
    PredicateEvaluator evaluator(holds_target("aten::relu"));
    return minified(original, evaluator, bisect, "op_120");
  };
  Searched cut_only = with_first_end(false);
  Searched then_alone = with_first_end(true);
  REQUIRE(then_alone.accepted.size() >= 2);
  CHECK(then_alone.accepted[0] == first_divergence_step);
  CHECK(then_alone.accepted[1] == failing_node_step);
  CHECK(encoded(then_alone.result) == encoded(cut_only.result));
  CHECK(then_alone.result.counters.queries < cut_only.result.counters.queries);
}

TEST_CASE("with many candidates at once a failing operator is narrowed by segments, each candidate a small one",
          "[search]") {
  SearchState original = chain_case(200, {{120, "aten::relu"}});
  PredicateEvaluator sequential(holds_target("aten::relu"));
  Searched schedule = minified(original, sequential, false);
  for (unsigned seed : {0u, 3u}) {
    std::vector<std::size_t> sizes;  // of every candidate evaluated, the sanity check's original first
    Predicate fails = [&, relu = holds_target("aten::relu")](const GraphDocument& document) {
      sizes.push_back(document.graph.size());
      return relu(document);
    };
    OutOfOrderEvaluator parallel(fails, 8, seed);
    Searched segmented = minified(original, parallel, true);
    CHECK(encoded(segmented.result) == encoded(schedule.result));
    // 25 operators, 3, the relu alone.
    std::vector<std::string> rounds{std::string(failing_segment_step), std::string(failing_segment_step),
                                    std::string(failing_node_step)};
    REQUIRE(segmented.accepted.size() >= rounds.size());
    CHECK(std::vector<std::string>(segmented.accepted.begin(), segmented.accepted.begin() + 3) == rounds);
    REQUIRE(sizes.size() > 1);
    CHECK(sizes.front() == original.document.graph.size());
    // A segment: 25 operators, the load of its input and the output.
    CHECK(*std::max_element(sizes.begin() + 1, sizes.end()) <= 27);
    // Three rounds of at most eight and their re-verifications, the schedule's end on three nodes.
    CHECK(segmented.result.counters.queries <= 26);
  }
}

TEST_CASE("a failure that needs operators of two segments shows in none: one round, then the bisection", "[search]") {
  SearchState original = chain_case(60, {{20, "aten::relu"}, {41, "aten::cos"}});
  Predicate fails = holds_both("aten::relu", "aten::cos");
  OutOfOrderEvaluator bisecting(fails, min_parallelism_to_split - 1, 0);
  Searched bisected = minified(original, bisecting, true);
  OutOfOrderEvaluator segmenting(fails, min_parallelism_to_split, 0);
  Searched segmented = minified(original, segmenting, true);
  REQUIRE_FALSE(segmented.accepted.empty());
  CHECK(segmented.accepted.front() == failing_prefix_step);
  CHECK(encoded(segmented.result) == encoded(bisected.result));
  CHECK(fails(segmented.result.best.document));
  // One round of segments more, and a bisection of four probes a round, which may ask a few more in
  // fewer rounds than one of three.
  CHECK(segmented.result.counters.queries <= bisected.result.counters.queries + 2 * min_parallelism_to_split);
}

TEST_CASE("a small failing kernel's computations are tried alone, last first, before the kernel", "[search]") {
  SearchState original = chain_case(40, {{22, "aten::relu"}});
  std::vector<std::string> kernel{"op_20", "op_21", "op_22", "op_23", "op_24", "op_25"};
  std::vector<std::size_t> sizes;  // of every candidate evaluated
  Predicate fails = [&, relu = holds_target("aten::relu")](const GraphDocument& document) {
    sizes.push_back(document.graph.size());
    return relu(document);
  };
  PredicateEvaluator sequential(fails);
  Searched searched = minified(original, sequential, true, std::nullopt, kernel);
  REQUIRE_FALSE(searched.accepted.empty());
  CHECK(searched.accepted[0] == failing_node_step);
  CHECK(searched.result.best.document.graph.size() == 3);
  CHECK(holds_target("aten::relu")(searched.result.best.document));
  // The sanity check, op_25, op_24 and op_23 alone passing, the relu alone and its re-verification
  // (3 nodes each: a load, the computation, the output); the kernel as a whole never.
  REQUIRE(sizes.size() >= 6);
  CHECK(std::vector<std::size_t>(sizes.begin() + 1, sizes.begin() + 6) == std::vector<std::size_t>(5, 3));
  CHECK(std::find(sizes.begin(), sizes.end(), 8) == sizes.end());
  CHECK(searched.result.counters.queries <= 8);

  // When no computation fails alone (the relu needs the tanh after it), the kernel as a whole.
  SearchState two_apart = chain_case(40, {{22, "aten::relu"}, {24, "aten::tanh"}});
  PredicateEvaluator both(holds_both("aten::relu", "aten::tanh"));
  Searched whole = minified(two_apart, both, true, std::nullopt, kernel);
  REQUIRE_FALSE(whole.accepted.empty());
  CHECK(whole.accepted[0] == failing_kernel_step);
  CHECK(holds_both("aten::relu", "aten::tanh")(whole.result.best.document));
}

namespace {

// Answers in evaluate() as PredicateEvaluator does; the eager values it is asked for arrive (or fail)
// at the search's next wait, as a pool's answer arrives while the search turns the pool.
class ValuesOnWait final : public PredicateEvaluator {
 public:
  ValuesOnWait(Predicate predicate, std::optional<EagerValueMap> arriving)
      : PredicateEvaluator(std::move(predicate)),
        values(EagerValues::asked_through([this](std::size_t ask, GraphDocument document) {
          asked.push_back(Ask{ask, document.graph.size(), evaluated().size()});
        })),
        arriving_(std::move(arriving)) {}

  bool wait_until(std::chrono::steady_clock::time_point) override {
    for (; answered_ < asked.size(); ++answered_) {
      if (arriving_) values->arrive(asked[answered_].ask, *arriving_);
      else values->fail();
    }
    return false;
  }

  struct Ask {
    std::size_t ask;
    std::size_t nodes;           // of the document asked for
    std::size_t judged_before;  // candidates judged before it was asked
  };
  std::shared_ptr<EagerValues> values;
  std::vector<Ask> asked;

 private:
  std::optional<EagerValueMap> arriving_;
  std::size_t answered_ = 0;
};

}  // namespace

TEST_CASE("values asked for by the bisection: only the failing prefix's, once it is found", "[search]") {
  SearchState original = chain_case(200, {{120, "aten::relu"}});
  PredicateEvaluator known(holds_target("aten::relu"));
  Searched expected = minified(original, known, true);

  // Whether each candidate judged reads the input alone (no load of a stored value).
  std::vector<bool> input_alone;
  Predicate recording = [&, relu = holds_target("aten::relu")](const GraphDocument& document) {
    std::vector<Node*> placeholders = document.graph.placeholders();
    input_alone.push_back(placeholders.size() == 1 && placeholders.front()->name() == "x_1");
    return relu(document);
  };
  ValuesOnWait late(recording, original.eager->all());
  SearchState awaiting = clone_state(original);
  awaiting.eager = late.values;
  Searched result = minified(awaiting, late, true);
  CHECK(encoded(result.result) == encoded(expected.result));
  CHECK(result.accepted == expected.accepted);
  CHECK(result.result.counters.queries == expected.result.counters.queries);
  // One ask, after the sanity check and log2(200) probes, each on the input alone: the prefix through
  // the relu (the input, 121 operators, the output). Then the relu on a load.
  REQUIRE(late.asked.size() == 1);
  CHECK(late.asked[0].nodes == 123);
  CHECK(late.asked[0].judged_before >= 8);
  CHECK(std::all_of(input_alone.begin(), input_alone.begin() + static_cast<std::ptrdiff_t>(late.asked[0].judged_before),
                    [](bool alone) { return alone; }));
  CHECK_FALSE(input_alone.back());

  // None come: the search stops where it needs them, with an error, having judged nothing more.
  input_alone.clear();
  ValuesOnWait never(recording, std::nullopt);
  awaiting.eager = never.values;
  SearchOptions options;
  options.strategies = *select_strategies({});
  options.bisect_prefix = true;
  VerdictCache cache("test");
  FakeClock clock;
  auto stopped = minify(clone_state(awaiting), never, cache, clock, options);
  REQUIRE(stopped.has_value());
  CHECK(stopped->stop == StopReason::error);
  REQUIRE(stopped->error.has_value());
  CHECK(stopped->error->message.find("eager values") != std::string::npos);
  REQUIRE(never.asked.size() == 1);
  CHECK(input_alone.size() == never.asked[0].judged_before);
}

TEST_CASE("values asked for at the search's start where it reads them before bisecting", "[search]") {
  SearchState original = chain_case(200, {{120, "aten::relu"}});
  PredicateEvaluator known(holds_target("aten::relu"));
  Searched expected = minified(original, known, false);
  ValuesOnWait late(holds_target("aten::relu"), original.eager->all());
  SearchState awaiting = clone_state(original);
  awaiting.eager = late.values;
  Searched result = minified(awaiting, late, false);
  CHECK(encoded(result.result) == encoded(expected.result));
  REQUIRE(late.asked.size() == 1);
  CHECK(late.asked[0].nodes == original.document.graph.size());
  CHECK(late.asked[0].judged_before == 0);
}

TEST_CASE("a state beyond the values asked for asks for the rest", "[search]") {
  SearchState original = chain_case(40, {});
  std::vector<std::size_t> asked;
  auto values = EagerValues::asked_through([&](std::size_t, GraphDocument document) {
    asked.push_back(document.graph.size());
  });
  SearchState prefix = truncated_at(original, 10);
  values->ask(prefix.document);
  values->ask(prefix.document);  // nothing new
  CHECK_FALSE(values->answered(prefix.document.graph));
  values->arrive(0, original.eager->all());
  CHECK(values->answered(prefix.document.graph));
  CHECK(values->find("op_8") != nullptr);
  CHECK_THROWS_AS(values->find("op_20"), std::logic_error);
  CHECK_FALSE(values->cover(original.document.graph));
  values->ask(original.document);
  REQUIRE(asked.size() == 2);
  CHECK(asked[1] == original.document.graph.size());
  CHECK_FALSE(values->answered(original.document.graph));
  values->arrive(1, original.eager->all());
  CHECK(values->cover(original.document.graph));
  CHECK(values->find("op_20") != nullptr);
}
