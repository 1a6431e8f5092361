// Test tool: runs a graph directory with a backend, in process, and writes the outputs as a graph
// directory of their own (an identity graph whose inputs are the outputs), so Python tests load
// them with worker/python/minifyd/graph_format.py and compare with PyTorch.
//   minifyd_run_backend GRAPH_DIR OUT_DIR --backend eager|torchscript|plugin:PATH
#include <iostream>

#include <CLI/CLI.hpp>

#include "common/graph_codec.h"
#include "worker/backends/backend_registry.h"
#include "worker/graph_values.h"
#include "worker/loaded_graph.h"
#include "worker/tensor_writer.h"

using namespace minifyd;

namespace {

int fail(const std::string& message) {
  std::cerr << "minifyd_run_backend: " << message << "\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"run a graph directory with a backend and save its outputs as a graph directory"};
  std::string graph_dir, out_dir, backend_name;
  app.add_option("graph_dir", graph_dir)->required();
  app.add_option("out_dir", out_dir)->required();
  app.add_option("--backend", backend_name)->required();
  CLI11_PARSE(app, argc, argv);

  auto document = load_graph_dir(graph_dir);
  if (!document) return fail(document.error().message);
  auto store = ContentStore::open(std::filesystem::path(graph_dir) / store_dir_name, false);
  if (!store) return fail(store.error().message);
  auto loaded = worker::load_graph(encode_graph_document(*document), *store, std::nullopt, nullptr);
  if (!loaded) return fail(loaded.error().message);
  auto backend = worker::make_backend(backend_name, {});
  if (!backend) return fail(backend.error().message);
  worker::RunArguments arguments = worker::fresh_arguments(*loaded);
  auto compiled = (*backend)->compile(loaded->document.graph, arguments.constants, worker::BackendContext{});
  if (compiled.failure) return fail("compile: " + compiled.failure->to_string());
  auto result = compiled.compiled->run(arguments.inputs);
  if (result.failure) return fail("run: " + result.failure->to_string());

  std::vector<c10::IValue> leaves = worker::flatten_output(result.output);
  auto out_store = ContentStore::open(std::filesystem::path(out_dir) / store_dir_name, true);
  if (!out_store) return fail(out_store.error().message);
  GraphDocument outputs;
  BlobBatch blobs(*out_store);
  ListValue returned{{}, true};
  for (std::size_t i = 0; i < leaves.size(); ++i) {
    if (!leaves[i].isTensor()) return fail("output " + std::to_string(i) + " is a " + leaves[i].tagKind() + ", not a tensor");
    auto stored = worker::store_tensor(blobs, leaves[i].toTensor());
    if (!stored) return fail(stored.error().message);
    stored->tensor.storage = outputs.storages.size();
    outputs.storages.push_back(stored->storage);
    outputs.inputs.push_back(stored->tensor);
    returned.items.push_back(NodeRef{*outputs.graph.create_node(OpCode::placeholder, "out" + std::to_string(i), "")});
  }
  std::vector<Value> output_args;
  output_args.emplace_back(std::move(returned));
  (void)outputs.graph.create_node(OpCode::output, "output", "", std::move(output_args));
  if (auto synced = blobs.sync(); !synced) return fail(synced.error().message);
  if (auto written = write_graph_json(outputs, out_dir); !written) return fail(written.error().message);
  if (auto rooted = out_store->write_root("graph", outputs.blob_hashes()); !rooted) return fail(rooted.error().message);
  std::cout << leaves.size() << " outputs written to " << out_dir << "\n";
  return 0;
}
