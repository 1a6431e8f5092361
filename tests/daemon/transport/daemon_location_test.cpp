// Where clients look for the daemon: flags, then $MINIFYD_STATE_DIR, $XDG_STATE_HOME, $HOME.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <optional>
#include <string>

#include "daemon/transport/daemon_location.h"

using minifyd::transport::locate_daemon;

namespace {

// Sets (or, with nullopt, unsets) an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) previous_ = old;
    if (value) ::setenv(name, value->c_str(), 1);
    else ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (previous_) ::setenv(name_, previous_->c_str(), 1);
    else ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> previous_;
};

}  // namespace

TEST_CASE("the state dir comes from the flag, then MINIFYD_STATE_DIR, XDG_STATE_HOME and HOME") {
  ScopedEnv home("HOME", "/home/me");
  ScopedEnv xdg("XDG_STATE_HOME", std::nullopt);
  ScopedEnv explicit_dir("MINIFYD_STATE_DIR", std::nullopt);
  CHECK(locate_daemon("", "").state_dir == "/home/me/.local/state/minifyd");
  {
    ScopedEnv set("XDG_STATE_HOME", "/state");
    CHECK(locate_daemon("", "").state_dir == "/state/minifyd");
    ScopedEnv set_explicit("MINIFYD_STATE_DIR", "/srv/minifyd");
    CHECK(locate_daemon("", "").state_dir == "/srv/minifyd");
    CHECK(locate_daemon("/flag/dir/", "").state_dir == "/flag/dir/");
  }
  ScopedEnv empty("MINIFYD_STATE_DIR", "");
  CHECK(locate_daemon("", "").state_dir == "/home/me/.local/state/minifyd");
}

TEST_CASE("the socket is the flag's, else minifyd.sock in the state dir, and both are absolute") {
  ScopedEnv explicit_dir("MINIFYD_STATE_DIR", "/srv/minifyd");
  CHECK(locate_daemon("", "").socket == "/srv/minifyd/minifyd.sock");
  CHECK(locate_daemon("", "/run/m.sock").socket == "/run/m.sock");
  auto relative = locate_daemon("state", "sock/../m.sock");
  CHECK(relative.state_dir == std::filesystem::current_path() / "state");
  CHECK(relative.socket == std::filesystem::current_path() / "m.sock");
}
