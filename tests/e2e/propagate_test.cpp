// propagate with the real worker: every call_function value lands in the store with its metadata,
// except a value whose storage aliases an earlier one (a view), as the seeds' ConcreteProp skips it;
// a root keeps the blobs from garbage collection.
#include <catch2/catch.hpp>

#include <cstring>

#include <boost/asio/io_context.hpp>

#include "common/graph_codec.h"
#include "daemon/pool/worker_pool.h"
#include "tests/support/sample_graph_dir.h"
#include "tests/support/temp_dir.h"

using namespace minifyd;

TEST_CASE("propagate stores each intermediate once, skipping views of earlier values", "[e2e][propagate]") {
  test::TempDir dir;
  // x -> relu -> view (aliases relu) -> mul -> output
  auto graph_dir = test::write_graph_dir(dir / "graph", [](Graph& graph, Node* x) {
    Node* relu = *graph.create_node(OpCode::call_function, "relu", "aten::relu", {NodeRef{x}});
    Node* view = *graph.create_node(OpCode::call_function, "view", "aten::view",
                                    {NodeRef{relu}, ListValue{{std::int64_t{32}}, false}});
    Node* mul = *graph.create_node(OpCode::call_function, "mul", "aten::mul.Tensor", {NodeRef{view}, 2.0});
    REQUIRE(graph.create_node(OpCode::output, "output", "", {ListValue{{NodeRef{mul}}, true}}).has_value());
  });
  auto document = load_graph_dir(graph_dir);
  REQUIRE(document.has_value());
  std::string store_path = (graph_dir / store_dir_name).string();

  pool::PoolConfig config;
  config.worker.executable = MINIFYD_WORKER_EXECUTABLE;
  config.warm_spares = false;
  boost::asio::io_context io;
  pool::WorkerPool pool(io, config);
  pool.start();
  std::optional<pool::WorkerOutcome> outcome;
  pool.submit(protocol::PropagateRequest{0, encode_graph_document(*document), store_path}, std::chrono::seconds(60),
              [&](pool::WorkerOutcome result) {
                outcome = std::move(result);
                pool.stop([] {});
              });
  io.run();

  REQUIRE(outcome.has_value());
  REQUIRE(std::holds_alternative<protocol::WorkerReply>(*outcome));
  const auto& reply = std::get<protocol::WorkerReply>(*outcome);
  REQUIRE(std::holds_alternative<protocol::PropagateReply>(reply));
  const auto& propagated = std::get<protocol::PropagateReply>(reply);
  REQUIRE(propagated.values.size() == 2);
  CHECK(propagated.values[0].node == "relu");
  CHECK(propagated.values[1].node == "mul");
  CHECK(propagated.values[0].tensor.shape == std::vector<std::int64_t>{4, 8});
  CHECK(propagated.values[1].tensor.shape == std::vector<std::int64_t>{32});

  auto store = ContentStore::open(store_path, false);
  REQUIRE(store.has_value());
  auto relu_bytes = store->get(propagated.values[0].storage.hash, propagated.values[0].storage.nbytes);
  REQUIRE(relu_bytes.has_value());
  REQUIRE(relu_bytes->size() == 32 * sizeof(float));
  std::vector<float> relu(32);
  std::memcpy(relu.data(), relu_bytes->data(), relu_bytes->size());
  std::vector<float> input = test::sample_values();
  for (std::size_t i = 0; i < relu.size(); ++i) CHECK(relu[i] == std::max(input[i], 0.0f));

  auto root = store->read_root(propagated.root);
  REQUIRE(root.has_value());
  CHECK(root->size() == 2);
  auto collected = store->gc();
  REQUIRE(collected.has_value());
  CHECK(store->contains(propagated.values[1].storage.hash));  // the root protects it
}
