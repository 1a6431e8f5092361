// Checks that a worker's sandbox holds, shared by the tests of the fake and the real worker:
// allowlisted environment, only fds 0-2, its own process group, a scratch working directory, no core
// dumps, and death with its coordinator.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include <boost/asio/io_context.hpp>

#include "daemon/pool/worker_process.h"
#include "tests/support/temp_dir.h"

namespace minifyd::test {

inline bool process_exists(pid_t pid) { return ::kill(pid, 0) == 0 || errno != ESRCH; }

// Starts the worker with a secret in the coordinator's environment and CUDA_VISIBLE_DEVICES set,
// and checks what its hello reports of its sandbox.
inline void check_sandbox(pool::WorkerConfig config) {
  using namespace std::chrono_literals;
  TempDir scratch;
  ::setenv("MINIFYD_TEST_SECRET", "do-not-leak", 1);
  config.cuda_visible_devices = "";
  config.scratch_root = scratch.path();
  boost::asio::io_context io;
  std::optional<pool::WorkerStart> start;
  std::shared_ptr<pool::WorkerProcess> worker;
  std::string core_limit;
  worker = pool::WorkerProcess::start(io, config, [&](pool::WorkerStart s) {
    start = std::move(s);
    std::ifstream limits("/proc/" + std::to_string(worker->pid()) + "/limits");
    for (std::string line; std::getline(limits, line);)
      if (line.rfind("Max core file size", 0) == 0) core_limit = line;
    worker->stop();
  });
  pid_t pid = worker->pid();
  io.run();
  // 1 byte, not 0: the kernel ignores 0 where core_pattern pipes dumps to a collector.
  CHECK(core_limit.find(" 1 ") != std::string::npos);
  CHECK(core_limit.find("bytes") != std::string::npos);
  ::unsetenv("MINIFYD_TEST_SECRET");
  REQUIRE(start.has_value());
  REQUIRE(std::holds_alternative<protocol::WorkerHello>(*start));
  const nlohmann::json& sandbox = std::get<protocol::WorkerHello>(*start).sandbox;
  INFO(sandbox.dump());
  std::vector<std::string> names = sandbox["environment"];
  for (const std::string& name : names) {
    INFO("environment variable " << name);
    CHECK((name == "CUDA_VISIBLE_DEVICES" ||
           std::find(pool::default_environment_allowlist.begin(), pool::default_environment_allowlist.end(), name) !=
               pool::default_environment_allowlist.end()));
  }
  CHECK(sandbox["cuda_visible_devices"] == "");
  CHECK(sandbox["open_fds"] == nlohmann::json::array({0, 1, 2}));
  CHECK(sandbox["pgid"] == pid);
  CHECK(sandbox["pgid"] != ::getpgrp());
  std::string cwd = sandbox["cwd"];
  CHECK(cwd.rfind(scratch.path().string() + "/minify-worker-", 0) == 0);
  CHECK_FALSE(std::filesystem::exists(cwd));  // removed with the worker
  CHECK_FALSE(process_exists(pid));
}

// Forks a coordinator that starts the worker, SIGKILLs that coordinator once the worker said
// hello, and checks the worker dies too.
// Also checks that the dead coordinator's scratch directory is swept by the next one.
inline void check_dies_with_coordinator(pool::WorkerConfig config) {
  using namespace std::chrono_literals;
  TempDir scratch_root;
  config.scratch_root = scratch_root.path();
  int pipe_fds[2];
  REQUIRE(::pipe(pipe_fds) == 0);
  pid_t coordinator = ::fork();
  REQUIRE(coordinator >= 0);
  if (coordinator == 0) {
    ::close(pipe_fds[0]);
    boost::asio::io_context io;
    std::shared_ptr<pool::WorkerProcess> worker;
    worker = pool::WorkerProcess::start(io, config, [&](pool::WorkerStart) {
      pid_t pid = worker->pid();
      (void)!::write(pipe_fds[1], &pid, sizeof pid);
    });
    io.run_for(60s);
    ::_exit(0);
  }
  ::close(pipe_fds[1]);
  pid_t worker_pid = -1;
  REQUIRE(::read(pipe_fds[0], &worker_pid, sizeof worker_pid) == sizeof worker_pid);
  ::close(pipe_fds[0]);
  REQUIRE(process_exists(worker_pid));

  ::kill(coordinator, SIGKILL);
  int status = 0;
  ::waitpid(coordinator, &status, 0);
  auto deadline = std::chrono::steady_clock::now() + 5s;
  while (process_exists(worker_pid) && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(10ms);
  CHECK_FALSE(process_exists(worker_pid));

  auto entries = [&] {
    return std::distance(std::filesystem::directory_iterator(scratch_root.path()), std::filesystem::directory_iterator());
  };
  REQUIRE(entries() == 1);  // left behind: nobody was there to remove it
  CHECK(pool::remove_orphaned_scratch_dirs(scratch_root.path()) == 1);
  CHECK(entries() == 0);
}

}  // namespace minifyd::test
