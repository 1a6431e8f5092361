// Locating minify-worker.
#include "daemon/pool/worker_executable.h"

#include <unistd.h>

#include <cstdlib>

#include "daemon/process/install_layout.h"

namespace minifyd::pool {

Expected<std::filesystem::path> default_worker_executable() {
  if (const char* configured = std::getenv("MINIFYD_WORKER")) return std::filesystem::path(configured);
  std::filesystem::path self = process::running_executable();
  if (self.empty()) return make_error(ErrorKind::io, "cannot find the running executable (/proc/self/exe)");
  std::string looked;
  for (const auto& candidate : {self.parent_path() / "minify-worker", self.parent_path() / ".." / "worker" / "minify-worker",
                                process::installed_worker_executable()}) {
    if (::access(candidate.c_str(), X_OK) == 0) return std::filesystem::weakly_canonical(candidate);
    looked += " " + candidate.string();
  }
#ifdef MINIFYD_WITHOUT_NATIVE_WORKER
  return make_error(ErrorKind::not_found,
                    "built without LibTorch (-DMINIFYD_BUILD_WORKER=OFF): no minify-worker for the eager, torchscript "
                    "and plugin backends (looked at" + looked +
                    "); the torch.compile backends (inductor, aot_eager, aot_eager_decomp_partition) need none");
#else
  return make_error(ErrorKind::not_found, "minify-worker not found (looked at" + looked + "); set MINIFYD_WORKER or pass --worker");
#endif
}

}  // namespace minifyd::pool
