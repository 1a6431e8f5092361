// The daemon's pools per worker program.
#include "daemon/service/program_pools.h"

#include "common/log.h"

namespace minifyd::service {

ProgramPool::ProgramPool(boost::asio::io_context& io, PoolConfig config)
    : pool(io, std::move(config)), scheduler(io, pool), queries(scheduler.add_client()) {}

ProgramPools::ProgramPools(boost::asio::io_context& io, PoolConfig native, std::string python)
    : io_(io), native_config_(std::move(native)), python_requested_(std::move(python)) {
  pools_[WorkerProgram::native] = std::make_unique<ProgramPool>(io_, native_config_);
}

void ProgramPools::start() { pools_[WorkerProgram::native]->pool.start(); }

Expected<std::string> ProgramPools::python() {
  std::lock_guard lock(python_mutex_);
  if (python_found_) return *python_found_;
  auto found = find_python(python_requested_);
  if (!found) return found.error();
  python_found_ = *found;
  return *found;
}

Expected<void> ProgramPools::can_serve(const std::string& backend) {
  auto program = worker_program_for(backend);
  if (!program) return program.error();
  if (*program == WorkerProgram::python)
    if (auto found = python(); !found) return found.error();
  return {};
}

Expected<ProgramPool*> ProgramPools::pool_for(const std::string& backend) {
  auto program = worker_program_for(backend);
  if (!program) return program.error();
  if (auto existing = pools_.find(*program); existing != pools_.end()) return existing->second.get();
  auto python = this->python();
  if (!python) return python.error();
  PoolConfig config = native_config_;
  auto worker = worker_config_for(backend, WorkerPrograms{"", *python}, native_config_.worker);
  if (!worker) return worker.error();
  config.worker = std::move(*worker);
  auto& created = pools_[*program] = std::make_unique<ProgramPool>(io_, std::move(config));
  log::info("starting " + std::to_string(created->pool.capacity()) + " Python worker(s) with " + *python);
  created->pool.start();
  return created.get();
}

std::vector<const ProgramPool*> ProgramPools::started() const {
  std::vector<const ProgramPool*> pools;
  for (const auto& [program, pool] : pools_) pools.push_back(pool.get());
  return pools;
}

void ProgramPools::stop(std::function<void()> done) {
  auto remaining = std::make_shared<std::size_t>(pools_.size());
  auto shared_done = std::make_shared<std::function<void()>>(std::move(done));
  for (auto& [program, pool] : pools_) {
    pool->scheduler.remove_client(pool->queries);
    pool->pool.stop([remaining, shared_done] {
      if (--*remaining == 0) (*shared_done)();
    });
  }
}

}  // namespace minifyd::service
