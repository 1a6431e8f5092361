// Where minifyd's parts are, found from the running executable.
#include "daemon/process/install_layout.h"

namespace minifyd::process {

std::filesystem::path running_executable() {
  std::error_code error;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  return error ? std::filesystem::path() : self;
}

// MINIFYD_LIBEXEC_FROM_BIN and MINIFYD_DATA_FROM_BIN are the install's directories relative to its
// bin/ (daemon/CMakeLists.txt), so that `cmake --install --prefix` anywhere keeps them true.
std::filesystem::path installed_worker_executable() {
  return (running_executable().parent_path() / MINIFYD_LIBEXEC_FROM_BIN / "minify-worker").lexically_normal();
}

std::optional<std::filesystem::path> installed_python_worker_script() {
  std::filesystem::path script =
      (running_executable().parent_path() / MINIFYD_DATA_FROM_BIN / "worker" / "python" / "minify_worker.py")
          .lexically_normal();
  std::error_code error;
  if (!std::filesystem::is_regular_file(script, error)) return std::nullopt;
  return script;
}

}  // namespace minifyd::process
