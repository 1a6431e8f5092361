// The client <-> minifyd socket protocol's envelope (docs/daemon.md): JSON lines. The daemon greets
// each connection; each request is an object with a "type" (and an optional "tag" that its reply
// echoes); each reply has "ok", and "error": {"kind", "message"} when it is false; `watch` then
// streams objects with an "event" field on the same connection. The messages inside the envelope:
// daemon_requests.h, daemon_replies.h, job_events.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/expected.h"

namespace minifyd::protocol {

inline constexpr std::int64_t daemon_protocol_version = 1;
// Requests are small (paths and a spec); graphs travel through the file system.
inline constexpr std::size_t daemon_max_request_bytes = 1024 * 1024;
// Messages nest a few levels; a deeper line is hostile (see json_nesting.h) and refused unparsed.
inline constexpr std::size_t daemon_max_nesting = 64;

// The first line on every connection: {"minifyd": "daemon", "protocol": 1, "pid": 4242}.
struct DaemonGreeting {
  std::int64_t protocol = daemon_protocol_version;
  std::int64_t pid = 0;
};
nlohmann::json encode(const DaemonGreeting& greeting);
// Errors: not a minifyd greeting, or another protocol version (naming both).
Expected<DaemonGreeting> decode_daemon_greeting(std::string_view line);

// A message as one line of the wire, without its newline. Invalid UTF-8 (a peer's bytes quoted in
// an error) is replaced, never thrown.
std::string to_line(const nlohmann::json& message);
// One line of the protocol, in either direction, as JSON. Errors: nested too deeply, not JSON.
Expected<nlohmann::json> parse_daemon_line(std::string_view line);

// A peer's text inside our error messages: at most `limit` bytes of it.
std::string excerpt(std::string_view text, std::size_t limit);

struct DaemonRequest {
  std::string type;     // one of daemon_request_types() (daemon_requests.h)
  nlohmann::json json;  // the whole request object
};
// A request line as a JSON object. Errors: those of parse_daemon_line, not an object.
Expected<nlohmann::json> parse_request_line(std::string_view line);

// The request's "tag", which its reply echoes; null when it has none.
nlohmann::json request_tag(const nlohmann::json& request);
// {"ok": false, "error": {"kind": ..., "message": ...}}, and "tag" unless `tag` is null.
nlohmann::json error_reply(const Error& error, const nlohmann::json& tag = nullptr);
// A reply's encoded body (an object) with "ok": true, and "tag" unless `tag` is null.
nlohmann::json ok_reply(nlohmann::json body, const nlohmann::json& tag = nullptr);
// Whether a message the daemon sends is a reply (it has "ok") rather than a streamed event.
bool is_reply(const nlohmann::json& message);
// A reply's value: the reply itself when ok, an Error with its kind and message otherwise. A reply
// without a boolean "ok", or a failed one without a string kind and message, is an io error naming
// what is wrong.
Expected<nlohmann::json> reply_value(nlohmann::json reply);

}  // namespace minifyd::protocol
