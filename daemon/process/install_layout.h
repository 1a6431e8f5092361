// Where minifyd's parts are, found from the running executable: beside it in the build tree, or
// where `cmake --install` put them (docs/deploy.md), so that an installed copy needs no source tree.
#pragma once

#include <filesystem>
#include <optional>

namespace minifyd::process {

// The running program's own path (/proc/self/exe); empty when the kernel does not say.
std::filesystem::path running_executable();

// minify-worker where the install puts it (LIBEXECDIR/minifyd), from the running executable.
std::filesystem::path installed_worker_executable();

// The Python worker's entry script where the install puts it (DATADIR/minifyd/worker/python), when
// it is there; the build tree's programs find none and use the source tree's.
std::optional<std::filesystem::path> installed_python_worker_script();

}  // namespace minifyd::process
