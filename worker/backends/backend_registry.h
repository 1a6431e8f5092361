// The one list of backends: "eager", "torchscript", "plugin:PATH.so".
#pragma once

#include <memory>
#include <string>

#include "common/expected.h"
#include "worker/backend.h"

namespace minifyd::worker {

// An unknown name or an unloadable plugin is an error naming the backend.
Expected<std::unique_ptr<Backend>> make_backend(const std::string& spec, const BackendOptions& options);

}  // namespace minifyd::worker
