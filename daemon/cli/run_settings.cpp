// The settings of a minification in this process.
#include "daemon/cli/run_settings.h"

namespace minifyd::cli {

Expected<run::RunSettings> run_settings_of(const PoolOptions& pool, const EvaluationOptions& evaluation,
                                           const std::filesystem::path& out_dir) {
  run::RunSettings settings;
  settings.out_dir = std::filesystem::absolute(out_dir).lexically_normal();
  auto slots = pool.slots();
  if (!slots) return slots.error();
  settings.slots = std::move(*slots);
  settings.workers = evaluation.worker_programs();
  settings.sandbox = evaluation.sandbox;
  std::error_code error;
  settings.minify_executable = std::filesystem::read_symlink("/proc/self/exe", error).string();
  return settings;
}

}  // namespace minifyd::cli
