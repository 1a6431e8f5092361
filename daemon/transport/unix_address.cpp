// Unix socket addresses.
#include "daemon/transport/unix_address.h"

#include <sys/socket.h>

#include <cstring>
#include <string>

namespace minifyd::transport {

Expected<sockaddr_un> unix_address(const std::filesystem::path& path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  const std::string& text = path.native();
  if (text.size() >= sizeof address.sun_path)
    return make_error(ErrorKind::invalid_input,
                      "the socket path " + text + " is " + std::to_string(text.size()) + " bytes, longer than the " +
                          std::to_string(sizeof address.sun_path - 1) +
                          " a Unix socket allows: choose a shorter --socket or --state-dir");
  std::memcpy(address.sun_path, text.c_str(), text.size() + 1);
  return address;
}

}  // namespace minifyd::transport
