// The client <-> minifyd socket protocol (docs/daemon.md): JSON lines. The daemon greets each
// connection; each request is an object with a "type" (and an optional "tag" echoed in its reply);
// each reply has "ok", and "error": {"kind", "message"} when it is false; `watch` then streams
// objects with an "event" field on the same connection.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/expected.h"

namespace minifyd::protocol {

inline constexpr const char* daemon_protocol_name = "minifyd.daemon";
inline constexpr std::int64_t daemon_protocol_version = 1;
// Requests are small (paths and a spec); graphs travel through the file system.
inline constexpr std::size_t daemon_max_request_bytes = 1024 * 1024;

// The request types the daemon serves.
const std::vector<std::string>& daemon_request_types();

struct DaemonGreeting {
  std::int64_t version = daemon_protocol_version;
  std::int64_t pid = 0;
};
nlohmann::json encode(const DaemonGreeting& greeting);
// Errors: not a minifyd greeting, or another protocol version (naming both).
Expected<DaemonGreeting> decode_daemon_greeting(std::string_view line);

struct DaemonRequest {
  std::string type;
  nlohmann::json json;  // the whole request object
};
// Errors name what is wrong: not JSON, not an object, no string "type", an unknown type.
Expected<DaemonRequest> decode_daemon_request(std::string_view line);

nlohmann::json error_reply(const Error& error);
// A reply's value: the reply itself when ok, its error (kind and message) otherwise.
Expected<nlohmann::json> reply_value(nlohmann::json reply);

}  // namespace minifyd::protocol
