// Finding the daemon.
#include "daemon/transport/daemon_location.h"

#include <pwd.h>
#include <unistd.h>

#include <cstdlib>

namespace minifyd::transport {
namespace {

std::filesystem::path home_dir() {
  if (const char* home = std::getenv("HOME"); home && *home) return home;
  if (const passwd* user = ::getpwuid(::geteuid()); user && user->pw_dir && *user->pw_dir) return user->pw_dir;
  return "/tmp";
}

std::filesystem::path default_state_dir() {
  if (const char* explicit_dir = std::getenv("MINIFYD_STATE_DIR"); explicit_dir && *explicit_dir) return explicit_dir;
  if (const char* xdg = std::getenv("XDG_STATE_HOME"); xdg && *xdg) return std::filesystem::path(xdg) / "minifyd";
  return home_dir() / ".local" / "state" / "minifyd";
}

}  // namespace

DaemonLocation locate_daemon(const std::string& state_dir, const std::string& socket) {
  DaemonLocation location;
  std::filesystem::path chosen = state_dir.empty() ? default_state_dir() : std::filesystem::path(state_dir);
  location.state_dir = std::filesystem::absolute(chosen).lexically_normal();
  location.socket = socket.empty() ? location.state_dir / default_socket_name
                                   : std::filesystem::absolute(socket).lexically_normal();
  return location;
}

}  // namespace minifyd::transport
