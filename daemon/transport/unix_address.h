// The address of a Unix socket by path, for the server and the client alike: the one place that
// knows a path must fit in sockaddr_un.
#pragma once

#include <sys/un.h>

#include <filesystem>

#include "common/expected.h"

namespace minifyd::transport {

// Errors: the path is too long for a Unix socket (the message names it and the limit).
Expected<sockaddr_un> unix_address(const std::filesystem::path& path);

}  // namespace minifyd::transport
