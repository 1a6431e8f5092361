// The `plugin:PATH.so` backend: a shared library implementing worker/backend.h, loaded with dlopen.
#pragma once

#include <memory>
#include <string>

#include "common/expected.h"
#include "worker/backend.h"

namespace minifyd::worker {

// Loads the library (dlopen RTLD_NOW | RTLD_LOCAL), checks its ABI version and creates its backend
// with `options`. The library stays loaded until the returned backend and every graph it compiled
// are destroyed. Errors name the path: an unloadable file (with dlerror's text), a missing entry
// point, an ABI version mismatch, or the plugin's own refusal of the options.
Expected<std::unique_ptr<Backend>> load_plugin_backend(const std::string& path, const BackendOptions& options);

}  // namespace minifyd::worker
