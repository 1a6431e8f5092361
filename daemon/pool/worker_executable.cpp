// Locating minify-worker.
#include "daemon/pool/worker_executable.h"

#include <unistd.h>

#include <cstdlib>

namespace minifyd {

Expected<std::filesystem::path> default_worker_executable() {
  if (const char* configured = std::getenv("MINIFYD_WORKER")) return std::filesystem::path(configured);
  std::error_code error;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) return make_error(ErrorKind::io, "cannot find the running executable: " + error.message());
  std::string looked;
  for (const auto& candidate : {self.parent_path() / "minify-worker", self.parent_path() / ".." / "worker" / "minify-worker"}) {
    if (::access(candidate.c_str(), X_OK) == 0) return std::filesystem::weakly_canonical(candidate);
    looked += " " + candidate.string();
  }
  return make_error(ErrorKind::not_found, "minify-worker not found (looked at" + looked + "); set MINIFYD_WORKER or pass --worker");
}

}  // namespace minifyd
