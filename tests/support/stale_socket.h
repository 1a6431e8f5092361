// A socket file that nothing listens on, as a daemon killed with SIGKILL leaves behind.
#pragma once

#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <stdexcept>

#include "daemon/transport/unix_address.h"

namespace minifyd::test {

// Binds a socket at `path` and closes it: the file stays, and connecting to it is refused.
inline void leave_stale_socket(const std::filesystem::path& path) {
  auto address = transport::unix_address(path);
  if (!address) throw std::runtime_error(address.error().message);
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  bool bound = fd >= 0 && ::bind(fd, reinterpret_cast<const sockaddr*>(&*address), sizeof *address) == 0;
  if (fd >= 0) ::close(fd);
  if (!bound) throw std::runtime_error("binding " + path.string() + " failed");
}

}  // namespace minifyd::test
