// The input shrinking's search, judged by predicates over the candidate graphs (the failure "needs"
// what the predicate asks for): which fills are kept, which values stay stored, and which
// requires_grad flags go, on a real content store.
#include <catch2/catch.hpp>

#include "common/content_store.h"
#include "daemon/shrink/input_shrink.h"
#include "tests/support/fake_evaluators.h"
#include "tests/support/graph_builder.h"
#include "tests/support/temp_dir.h"

using namespace minifyd;
using search::test::PredicateEvaluator;

namespace {

// x (4 floats in [-2, 3]) added to w (1024 floats), both stored; x requires grad, w does not.
struct Fixture {
  test::TempDir dir;
  ContentStore store = *ContentStore::open(dir / "store", true);
  GraphDocument document;

  Fixture() {
    std::vector<float> x{-2.0f, 0.5f, 3.0f, 1.0f};
    std::vector<float> w(1024, 0.25f);
    auto x_hash = store.put(x.data(), x.size() * sizeof(float));
    auto w_hash = store.put(w.data(), w.size() * sizeof(float));
    REQUIRE(x_hash.has_value());
    REQUIRE(w_hash.has_value());
    document.storages = {{*x_hash, 16, "cpu", std::nullopt}, {*w_hash, 4096, "cpu", std::nullopt}};
    Node* xs = test::placeholder(document.graph, "x");
    Node* ws = test::placeholder(document.graph, "w");
    Node* add = test::call(document.graph, "add", "aten::add.Tensor", {Value(NodeRef{ws}), Value(NodeRef{xs})});
    test::add_node(document.graph, OpCode::output, "output", "output", {Value(NodeRef{add})});
    document.inputs = {TensorMeta{0, DType::float32, {4}, {1}, 0, true},
                       TensorMeta{1, DType::float32, {256, 4}, {4, 1}, 0, false}};
  }
};

const std::optional<StorageFill>& fill_of(const GraphDocument& document, std::size_t input) {
  return document.storages[input_tensor(document.inputs[input])->storage].fill;
}

}  // namespace

TEST_CASE("a failure that needs no values: every storage zeros in one round", "[shrink]") {
  Fixture fixture;
  PredicateEvaluator evaluator([](const GraphDocument&) { return true; });
  auto shrunk = shrink::shrink_inputs(fixture.document, fixture.store, evaluator, {});
  REQUIRE(shrunk.has_value());
  CHECK(fill_of(shrunk->document, 0)->kind == FillKind::zeros);
  CHECK(fill_of(shrunk->document, 1)->kind == FillKind::zeros);
  CHECK(shrunk->document.blob_hashes().empty());
  CHECK(shrunk->record.before.stored_bytes == 4112);
  CHECK(shrunk->record.before.largest == "input w");
  CHECK(shrunk->record.after.stored_bytes == 0);
  CHECK(shrunk->record.after.largest.empty());
  CHECK(shrunk->record.requires_grad_dropped == std::vector<std::string>{"input x"});
  // zeros, ones, random at once; requires_grad; the result once more.
  CHECK(shrunk->record.queries == 5);
}

TEST_CASE("a failure that needs x's values keeps them stored and shrinks w", "[shrink]") {
  Fixture fixture;
  PredicateEvaluator evaluator([](const GraphDocument& document) { return !fill_of(document, 0).has_value(); });
  auto shrunk = shrink::shrink_inputs(fixture.document, fixture.store, evaluator, {});
  REQUIRE(shrunk.has_value());
  CHECK_FALSE(fill_of(shrunk->document, 0).has_value());
  CHECK(fill_of(shrunk->document, 1)->kind == FillKind::zeros);
  CHECK(shrunk->record.after.stored_bytes == 16);
  CHECK(shrunk->record.after.largest == "input x");
  REQUIRE(shrunk->record.storages.size() == 2);
  CHECK(shrunk->record.storages[0].tensor == "input w");  // largest first
  CHECK(shrunk->record.storages[0].replaced_by == "zeros (float32)");
  CHECK(shrunk->record.storages[1].replaced_by.empty());
  CHECK(shrunk->record.storages[1].refused ==
        std::vector<std::string>{"zeros (float32)", "ones (float32)", "random in [-2, 3] (float32, seed 0)"});
}

TEST_CASE("a failure that needs x's range takes the random fill within it", "[shrink]") {
  Fixture fixture;
  PredicateEvaluator evaluator([](const GraphDocument& document) {
    const auto& fill = fill_of(document, 0);
    return !fill || fill->kind == FillKind::random;
  });
  auto shrunk = shrink::shrink_inputs(fixture.document, fixture.store, evaluator, {});
  REQUIRE(shrunk.has_value());
  const auto& fill = fill_of(shrunk->document, 0);
  REQUIRE(fill.has_value());
  CHECK(fill->kind == FillKind::random);
  CHECK(fill->low == -2.0);
  CHECK(fill->high == 3.0);
  CHECK(shrunk->record.after.stored_bytes == 0);
}

TEST_CASE("requires_grad stays where the failure needs it", "[shrink]") {
  Fixture fixture;
  input_tensor(fixture.document.inputs[1])->requires_grad = true;
  PredicateEvaluator evaluator([](const GraphDocument& document) { return input_tensor(document.inputs[0])->requires_grad; });
  auto shrunk = shrink::shrink_inputs(fixture.document, fixture.store, evaluator, {});
  REQUIRE(shrunk.has_value());
  CHECK(shrunk->record.requires_grad_dropped == std::vector<std::string>{"input w"});
  CHECK(shrunk->record.requires_grad_kept == std::vector<std::string>{"input x"});
  CHECK(input_tensor(shrunk->document.inputs[0])->requires_grad);
  CHECK_FALSE(input_tensor(shrunk->document.inputs[1])->requires_grad);
}

TEST_CASE("a shrunk graph that passes when judged again is not kept", "[shrink]") {
  Fixture fixture;
  int judged = 0;
  // Fails until the final judgement of the result (5th query, as in the first case).
  PredicateEvaluator evaluator([&judged](const GraphDocument&) { return ++judged < 5; });
  auto shrunk = shrink::shrink_inputs(fixture.document, fixture.store, evaluator, {});
  REQUIRE(shrunk.has_value());
  CHECK_FALSE(shrunk->record.error.empty());
  CHECK(shrunk->document.blob_hashes().size() == 2);
  CHECK(shrunk->record.after.stored_bytes == 4112);
}

TEST_CASE("the first proposed size under which the graph still fails is kept", "[shrink]") {
  Fixture fixture;
  std::vector<float> two{-2.0f, 0.5f};
  std::vector<float> three{-2.0f, 0.5f, 3.0f};
  auto two_hash = fixture.store.put(two.data(), 8);
  auto three_hash = fixture.store.put(three.data(), 12);
  REQUIRE(two_hash.has_value());
  REQUIRE(three_hash.has_value());
  auto proposal = [&fixture](std::string name, const std::string& hash, std::int64_t size) {
    shrink::ShapeProposal made{std::move(name), "s0=" + std::to_string(size), fixture.document.storages,
                               fixture.document.inputs};
    made.storages[0] = StorageRef{hash, static_cast<std::uint64_t>(size * 4), "cpu", std::nullopt};
    input_tensor(made.inputs[0])->shape = {size};
    return made;
  };
  shrink::ShapeProposer propose = [&](const GraphDocument&) -> Expected<shrink::ShapeProposals> {
    return shrink::ShapeProposals{"s0=4", {proposal("smallest", *two_hash, 2), proposal("1/2", *three_hash, 3)}, ""};
  };
  // The failure needs x to have 3 elements at least, and its values stored.
  PredicateEvaluator evaluator([](const GraphDocument& document) {
    return input_tensor(document.inputs[0])->shape[0] >= 3 && !fill_of(document, 0).has_value();
  });
  auto shrunk = shrink::shrink_inputs(fixture.document, fixture.store, evaluator, propose);
  REQUIRE(shrunk.has_value());
  CHECK(input_tensor(shrunk->document.inputs[0])->shape == std::vector<std::int64_t>{3});
  CHECK(shrunk->document.storages[0].hash == *three_hash);
  CHECK(shrunk->record.shapes == "smaller (s0=4 -> s0=3, the proposal `1/2`): x [4] -> [3]");
  CHECK(shrunk->record.after.stored_bytes == 12);
}

TEST_CASE("sizes the proposer cannot shrink are kept, saying why", "[shrink]") {
  Fixture fixture;
  shrink::ShapeProposer propose = [](const GraphDocument&) -> Expected<shrink::ShapeProposals> {
    return shrink::ShapeProposals{"s0=4", {}, "every size is fixed by the graph's own arguments (Eq(s0, 4))"};
  };
  PredicateEvaluator evaluator([](const GraphDocument&) { return true; });
  auto shrunk = shrink::shrink_inputs(fixture.document, fixture.store, evaluator, propose);
  REQUIRE(shrunk.has_value());
  CHECK(shrunk->record.shapes == "kept: every size is fixed by the graph's own arguments (Eq(s0, 4))");
}
