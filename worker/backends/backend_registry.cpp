// Backend construction by name.
#include "worker/backends/backend_registry.h"

#include "worker/backends/eager_backend.h"

namespace minifyd::worker {

Expected<std::unique_ptr<Backend>> make_backend(const std::string& spec, const BackendOptions& /*options*/) {
  if (spec == "eager") return make_eager_backend();
  return make_error(ErrorKind::invalid_input, "unknown backend '" + spec + "' (eager, torchscript, plugin:PATH.so)");
}

}  // namespace minifyd::worker
