// The daemon's pools per worker program.
#include "daemon/service/program_pools.h"

#include "common/log.h"

namespace minifyd::service {

ProgramPool::ProgramPool(boost::asio::io_context& io, pool::PoolConfig config)
    : pool(io, std::move(config)), scheduler(io, pool), queries(scheduler.add_client()) {}

ProgramPools::ProgramPools(boost::asio::io_context& io, pool::PoolConfig native, std::string native_missing,
                           std::string python)
    : io_(io),
      native_config_(std::move(native)),
      native_missing_(std::move(native_missing)),
      python_requested_(std::move(python)) {
  if (native_missing_.empty()) pools_[pool::WorkerProgram::native] = std::make_unique<ProgramPool>(io_, native_config_);
}

void ProgramPools::start() {
  if (auto native = pools_.find(pool::WorkerProgram::native); native != pools_.end()) native->second->pool.start();
}

Expected<std::string> ProgramPools::python() {
  std::lock_guard lock(python_mutex_);
  if (python_found_) return *python_found_;
  auto found = pool::find_python(python_requested_);
  if (!found) return found.error();
  python_found_ = *found;
  return *found;
}

Expected<void> ProgramPools::can_serve(const std::string& backend) {
  auto program = pool::worker_program_for(backend);
  if (!program) return program.error();
  if (*program == pool::WorkerProgram::native && !native_missing_.empty())
    return make_error(ErrorKind::unsupported, "backend '" + backend + "': " + native_missing_);
  if (*program == pool::WorkerProgram::python)
    if (auto found = python(); !found) return found.error();
  return {};
}

Expected<ProgramPool*> ProgramPools::pool_for(const std::string& backend) {
  auto program = pool::worker_program_for(backend);
  if (!program) return program.error();
  if (auto existing = pools_.find(*program); existing != pools_.end()) return existing->second.get();
  if (auto servable = can_serve(backend); !servable) return servable.error();
  auto python = this->python();
  if (!python) return python.error();
  pool::PoolConfig config = native_config_;
  auto worker = pool::worker_config_for(backend, pool::WorkerPrograms{"", *python}, native_config_.worker);
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
  // A daemon without minify-worker that ran no torch.compile job yet has no pool to wait for.
  if (pools_.empty()) return done();
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
