// Benchmark: per-query latency of a warm worker. Sends the same evaluate request N times through a
// one-slot WorkerPool (the path `minify query` and the search use) and reports the median and
// p90 wall time per query, the worker's own compile + run time, and the difference: the
// coordinator/worker overhead (JSON both ways, graph decoding and validation, tensor loading from
// the store, operator lookup).
//   minifyd_bench_query_latency GRAPH_DIR --backend eager [-n 1000] [--worker PATH] [--python PY]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <CLI/CLI.hpp>

#include "common/graph_codec.h"
#include "daemon/pool/worker_pool.h"
#include "daemon/pool/worker_program.h"

using namespace minifyd;
using Clock = std::chrono::steady_clock;

namespace {

double percentile(std::vector<double> values, double p) {
  std::sort(values.begin(), values.end());
  return values[static_cast<std::size_t>(p * static_cast<double>(values.size() - 1))];
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"per-query latency of a warm worker (minify-worker, or the Python worker for torch.compile backends)"};
  std::string dir, backend = "eager", worker, python;
  int count = 1000;
  app.add_option("dir", dir, "graph directory")->required();
  app.add_option("--backend", backend)->capture_default_str();
  app.add_option("-n", count, "queries")->capture_default_str();
  app.add_option("--worker", worker, "minify-worker (default: found beside the build)");
  app.add_option("--python", python, "the PyTorch 2.x python of the torch.compile backends (default: found)");
  CLI11_PARSE(app, argc, argv);

  auto document = load_graph_dir(dir);
  if (!document) {
    std::cerr << document.error().message << "\n";
    return 2;
  }
  pool::PoolConfig config;
  auto worker_config = pool::worker_config_for(backend, pool::WorkerPrograms{worker, python});
  if (!worker_config) {
    std::cerr << worker_config.error().message << "\n";
    return 2;
  }
  config.worker = std::move(*worker_config);
  config.warm_spares = false;
  protocol::EvaluateRequest request;
  request.graph = encode_graph_document(*document);
  request.store = std::filesystem::absolute(std::filesystem::path(dir) / store_dir_name).string();
  request.backend = backend;

  boost::asio::io_context io;
  pool::WorkerPool pool(io, config);
  pool.start();
  std::vector<double> wall_ms, worker_ms;
  int failures = 0;
  Clock::time_point sent;
  // One warm-up query (worker start, first-touch allocations), then the measured ones back to back.
  std::function<void(int)> send = [&](int remaining) {
    sent = Clock::now();
    pool.submit(request, std::chrono::seconds(60), [&, remaining](pool::WorkerOutcome outcome) {
      double wall = std::chrono::duration<double, std::milli>(Clock::now() - sent).count();
      auto* reply = std::get_if<protocol::WorkerReply>(&outcome);
      auto* evaluated = reply ? std::get_if<protocol::EvaluateReply>(reply) : nullptr;
      if (!evaluated || !evaluated->verdict.pass) ++failures;
      if (remaining <= count && evaluated) {
        wall_ms.push_back(wall);
        worker_ms.push_back(evaluated->compile_ms + evaluated->run_ms);
      }
      if (remaining > 1) send(remaining - 1);
      else pool.stop([] {});
    });
  };
  send(count + 1);
  io.run();
  if (failures > 0 || wall_ms.empty()) {
    std::cerr << failures << " queries did not pass\n";
    return 1;
  }
  std::vector<double> overhead;
  for (std::size_t i = 0; i < wall_ms.size(); ++i) overhead.push_back(wall_ms[i] - worker_ms[i]);
  std::printf("graph %s: %zu nodes, backend %s, %zu queries\n", dir.c_str(), document->graph.size(), backend.c_str(),
              wall_ms.size());
  std::printf("per query: median %.3f ms, p90 %.3f ms (worker compile+run median %.3f ms)\n",
              percentile(wall_ms, 0.5), percentile(wall_ms, 0.9), percentile(worker_ms, 0.5));
  std::printf("overhead (wall - compile - run): median %.3f ms, p90 %.3f ms\n", percentile(overhead, 0.5),
              percentile(overhead, 0.9));
  return 0;
}
