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
// ~/.local/state/minifyd (~ from $HOME, else the password database). Socket: `socket` if given,
// else STATE_DIR/minifyd.sock. Both absolute. Reads the environment: call it before other threads
// may change it.
DaemonLocation locate_daemon(const std::string& state_dir, const std::string& socket);

}  // namespace minifyd::transport
