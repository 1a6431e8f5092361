// The pool's slots from the command line.
#include "daemon/options/pool_options.h"

#include <algorithm>
#include <sstream>

#include "daemon/options/number_option.h"

namespace minifyd::options {

void PoolOptions::add_to(CLI::App& command) {
  auto* cpu = command.add_option("--workers", workers, "workers evaluating candidates at once (default: cores, at most 256)")
                  ->check(within(number_ranges::workers));
  auto* gpu_list = command.add_option("--gpus", gpus, "GPUs to pin workers to, e.g. 0,1 (instead of --workers)")
                       ->excludes(cpu);
  command.add_option("--workers-per-gpu", workers_per_gpu, "workers per GPU of --gpus")
      ->needs(gpu_list)
      ->check(within(number_ranges::workers_per_gpu));
}

Expected<std::vector<pool::PoolSlot>> PoolOptions::slots() const {
  std::vector<pool::PoolSlot> result;
  if (gpus.empty()) {
    result.assign(std::max<std::size_t>(workers, 1), pool::PoolSlot{});
    return result;
  }
  std::stringstream list(gpus);
  std::string gpu;
  while (std::getline(list, gpu, ',')) {
    if (gpu.empty() || gpu.find_first_not_of("0123456789") != std::string::npos)
      return make_error(ErrorKind::invalid_input, "--gpus: '" + gpu + "' is not a GPU index (e.g. --gpus 0,1)");
    for (std::size_t k = 0; k < std::max<std::size_t>(workers_per_gpu, 1); ++k) result.push_back(pool::PoolSlot{gpu});
  }
  if (result.empty()) return make_error(ErrorKind::invalid_input, "--gpus: no GPU index given");
  // One bound on the processes a pool starts, however they are spread over GPUs.
  if (!check_number(static_cast<double>(result.size()), number_ranges::workers))
    return make_error(ErrorKind::invalid_input, "--gpus and --workers-per-gpu: " + std::to_string(result.size()) +
                                                    " workers in all, at most " +
                                                    std::to_string(static_cast<int>(number_ranges::workers.max)));
  return result;
}

}  // namespace minifyd::options
