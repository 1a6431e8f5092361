// Backend construction by name.
#include "worker/backends/backend_registry.h"

#include "worker/backends/eager_backend.h"
#include "worker/backends/plugin_backend.h"
#include "worker/backends/torchscript_backend.h"

namespace minifyd::worker {

Expected<std::unique_ptr<Backend>> make_backend(const std::string& spec, const BackendOptions& options) {
  static constexpr std::string_view plugin_prefix = "plugin:";
  if (spec == "eager") return make_eager_backend();
  if (spec == "torchscript") return make_torchscript_backend(options);
  if (spec.rfind(plugin_prefix, 0) == 0) return load_plugin_backend(spec.substr(plugin_prefix.size()), options);
  return make_error(ErrorKind::invalid_input, "unknown backend '" + spec + "' (eager, torchscript, plugin:PATH.so)");
}

}  // namespace minifyd::worker
