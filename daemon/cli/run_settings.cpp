// The settings of a minification in this process.
#include "daemon/cli/run_settings.h"

#include "daemon/process/install_layout.h"

namespace minifyd::cli {

Expected<run::RunSettings> run_settings_of(const options::PoolOptions& pool, const options::EvaluationOptions& evaluation,
                                           const std::filesystem::path& out_dir) {
  run::RunSettings settings;
  settings.out_dir = std::filesystem::absolute(out_dir).lexically_normal();
  auto slots = pool.slots();
  if (!slots) return slots.error();
  settings.slots = std::move(*slots);
  settings.workers = evaluation.worker_programs();
  settings.sandbox = evaluation.sandbox;
  settings.minify_executable = process::running_executable().string();
  return settings;
}

}  // namespace minifyd::cli
