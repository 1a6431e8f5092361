// How many workers, and where: --workers N CPU slots, or --gpus 0,1 --workers-per-gpu K, K slots
// per listed GPU, each pinned to it with CUDA_VISIBLE_DEVICES. Shared by `minify run` and minifyd.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include "common/expected.h"
#include "common/number_range.h"
#include "daemon/pool/worker_pool.h"

namespace minifyd::options {

struct PoolOptions {
  // One per core, within the range --workers takes (common/number_range.h).
  std::size_t workers = std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1,
                                                static_cast<std::size_t>(number_ranges::workers.max));
  std::string gpus;
  std::size_t workers_per_gpu = 1;

  void add_to(CLI::App& command);
  // Errors name a bad GPU index.
  Expected<std::vector<pool::PoolSlot>> slots() const;
};

}  // namespace minifyd::options
