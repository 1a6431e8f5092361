// minify-worker: a sandboxed LibTorch process that evaluates candidate graphs for the coordinator.
#include <fcntl.h>
#include <unistd.h>

#include <iostream>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <torch/version.h>

#include <CLI/CLI.hpp>

#include "common/sandbox_report.h"
#include "common/sha256.h"
#include "protocol/line_buffer.h"
#include "worker/cuda_devices.h"
#include "worker/device_sync.h"
#include "worker/fork_server.h"
#include "worker/server.h"

namespace {

minifyd::protocol::WorkerHello make_hello(nlohmann::json sandbox, std::size_t concurrency) {
  minifyd::protocol::WorkerHello hello;
  hello.pid = ::getpid();
  hello.concurrency = concurrency;
  hello.torch_version = TORCH_VERSION;
  hello.devices = minifyd::worker::visible_cuda_devices();
  hello.sandbox = std::move(sandbox);
  hello.backends = {"eager", "torchscript", "plugin"};
  return hello;
}

}  // namespace

int main(int argc, char** argv) {
  // The sandbox as the coordinator made it, before this process opens anything of its own.
  nlohmann::json sandbox = minifyd::describe_own_sandbox();
  CLI::App app{"minify-worker: evaluates candidate graphs for minify/minifyd over JSON lines on stdin/stdout"};
  std::size_t max_line_bytes = minifyd::protocol::default_max_line_bytes;
  int threads = 1;
  std::uint64_t cache_mb = 2048;
  app.add_option("--max-line-bytes", max_line_bytes, "longest request line accepted")->capture_default_str();
  app.add_option("--threads", threads, "intra-op threads (workers run side by side)")->capture_default_str();
  app.add_option("--blob-cache-mb", cache_mb, "verified tensor data kept across requests, in MiB")->capture_default_str();
  bool no_fork_server = false;
  app.add_flag("--no-fork-server", no_fork_server, "serve requests in this process, not in forked children");
  std::size_t max_concurrent = 32;
  app.add_option("--max-concurrent", max_concurrent, "requests served at once, each by a forked child (fork server only)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  // The protocol gets a private copy of stdout; fd 1 becomes stderr, so anything a kernel, a
  // plugin or LibTorch prints cannot corrupt the protocol stream.
  int protocol_fd = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
  if (protocol_fd < 0 || ::dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
    std::perror("minify-worker: redirecting stdout");
    return 1;
  }
  at::set_num_threads(threads);
  std::optional<at::Device> cuda_device;
  if (at::hasCUDA() && at::detail::getCUDAHooks().getNumGPUs() > 0) cuda_device = at::Device(at::kCUDA, 0);
  // The GPU's context is created by the first CUDA call, which takes seconds while other processes
  // create theirs: done before the hello, so that no query's time limit pays for it.
  if (cuda_device)
    if (auto failure = minifyd::worker::synchronize_device()) {
      std::cerr << "minify-worker: initialising the GPU: " << failure->to_string() << "\n";
      return 1;
    }
  // A child forked after CUDA was initialised cannot use CUDA: with a GPU, serve in this process,
  // one request at a time.
  bool forking = !cuda_device && !no_fork_server;
  std::size_t concurrency = forking ? max_concurrent : 1;
  if (!minifyd::worker::write_line(protocol_fd, minifyd::protocol::encode(make_hello(std::move(sandbox), concurrency)).dump()))
    return 1;
  // OpenSSL reads its configuration at its first use (the first blob hashed): here, once, rather than
  // in each forked child, a few milliseconds of every crashing candidate's.
  minifyd::sha256_hex("", 0);
  // Built once, before forking: each child gets a copy, and serves request after request (its blob
  // cache filling as it goes) until it dies.
  minifyd::worker::RequestHandler handler(cuda_device, cache_mb * 1024 * 1024);
  int code = forking ? minifyd::worker::serve_forking(STDIN_FILENO, protocol_fd, max_line_bytes, concurrency,
                                                     [&](int request_fd, int reply_fd) {
                                                       return minifyd::worker::serve(request_fd, reply_fd, handler, max_line_bytes,
                                                                                     minifyd::worker::Serving::one_job);
                                                     })
                     : minifyd::worker::serve(STDIN_FILENO, protocol_fd, handler, max_line_bytes,
                                              minifyd::worker::Serving::every_job);
  // Every reply is written (unbuffered); skipping LibTorch's static destructors saves a quarter of
  // a second per worker at every pool shutdown.
  ::_exit(code);
}
