// Finding the daemon.
#include "daemon/transport/daemon_location.h"

#include <cstdlib>

namespace minifyd::transport {
namespace {

std::filesystem::path default_state_dir() {
  if (const char* explicit_dir = std::getenv("MINIFYD_STATE_DIR"); explicit_dir && *explicit_dir) return explicit_dir;
  if (const char* xdg = std::getenv("XDG_STATE_HOME"); xdg && *xdg) return std::filesystem::path(xdg) / "minifyd";
  const char* home = std::getenv("HOME");
  return std::filesystem::path(home && *home ? home : "/tmp") / ".local" / "state" / "minifyd";
}

}  // namespace

DaemonLocation locate_daemon(const std::string& state_dir, const std::string& socket) {
  DaemonLocation location;
  location.state_dir = std::filesystem::absolute(state_dir.empty() ? default_state_dir() : std::filesystem::path(state_dir)).lexically_normal();
  location.socket = socket.empty() ? location.state_dir / default_socket_name
                                   : std::filesystem::absolute(socket).lexically_normal();
  return location;
}

}  // namespace minifyd::transport
