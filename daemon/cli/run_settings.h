// The settings of a minification in this process (`minify run`, `minify capture --run`): the pool's
// slots, the worker programs, and this executable for repro.py.
#pragma once

#include <filesystem>

#include "common/expected.h"
#include "daemon/options/evaluation_options.h"
#include "daemon/options/pool_options.h"
#include "daemon/run/out_dir_run.h"

namespace minifyd::cli {

Expected<run::RunSettings> run_settings_of(const options::PoolOptions& pool, const options::EvaluationOptions& evaluation,
                                           const std::filesystem::path& out_dir);

}  // namespace minifyd::cli
