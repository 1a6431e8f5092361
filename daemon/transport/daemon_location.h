// Where the daemon lives when nobody says: clients find a daemon started with defaults without flags.
#pragma once

#include <filesystem>
#include <string>

namespace minifyd::transport {

inline constexpr const char* default_socket_name = "minifyd.sock";

struct DaemonLocation {
  std::filesystem::path state_dir;
  std::filesystem::path socket;
};

// State dir: `state_dir` if given, else $MINIFYD_STATE_DIR, else $XDG_STATE_HOME/minifyd, else
// $HOME/.local/state/minifyd. Socket: `socket` if given, else STATE_DIR/minifyd.sock. Absolute.
DaemonLocation locate_daemon(const std::string& state_dir, const std::string& socket);

}  // namespace minifyd::transport
