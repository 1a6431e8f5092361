// The daemon's worker pools, one per worker program (daemon/pool/worker_program.h), each shared
// fairly among the jobs and queries that need it by a FairScheduler of its own: minify-worker's
// starts with the daemon; the Python worker's (the torch.compile backends) on the first job or query
// of such a backend, so a daemon that never sees one never pays for its workers. Lives on the
// daemon's io thread, except python(), which any thread may call.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "common/expected.h"
#include "daemon/pool/worker_pool.h"
#include "daemon/pool/worker_program.h"
#include "daemon/service/fair_scheduler.h"

namespace minifyd::service {

struct ProgramPool {
  ProgramPool(boost::asio::io_context& io, pool::PoolConfig config);

  pool::WorkerPool pool;
  FairScheduler scheduler;
  FairScheduler::ClientId queries;  // the scheduler's client for one-off queries
};

class ProgramPools {
 public:
  // `native`: slots, sandbox and minify-worker; the Python worker's pool gets the same slots and
  // sandbox. `native_missing`: why there is no minify-worker (then its backends are refused with
  // it), empty when there is. `python`: --python (empty: find_python() when first needed).
  ProgramPools(boost::asio::io_context& io, pool::PoolConfig native, std::string native_missing, std::string python);

  void start();  // minify-worker's pool, when there is a minify-worker

  // The python serving the torch.compile backends, found once (running candidates' --check: seconds).
  Expected<std::string> python();
  // Whether some program serves `backend` (for the torch.compile backends: a python is found).
  Expected<void> can_serve(const std::string& backend);
  // The pool of the program serving `backend`, started on first use; an error when none can.
  Expected<ProgramPool*> pool_for(const std::string& backend);
  // The pools started so far.
  std::vector<const ProgramPool*> started() const;
  // Stops every pool's queries client and pool; `done` once the last worker is reaped.
  void stop(std::function<void()> done);

 private:
  boost::asio::io_context& io_;
  pool::PoolConfig native_config_;
  std::string native_missing_;
  std::map<pool::WorkerProgram, std::unique_ptr<ProgramPool>> pools_;
  std::mutex python_mutex_;
  std::string python_requested_;
  std::optional<std::string> python_found_;
};

}  // namespace minifyd::service
