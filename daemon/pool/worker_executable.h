// Where the minify-worker executable is, when the user does not say.
#pragma once

#include <filesystem>

#include "common/expected.h"

namespace minifyd::pool {

// $MINIFYD_WORKER if set; else minify-worker beside the running executable, in ../worker/ (the
// build tree's layout) or where the install puts it. An error lists where it looked.
Expected<std::filesystem::path> default_worker_executable();

}  // namespace minifyd::pool
