// The daemon protocol's messages.
#include "protocol/daemon_messages.h"

#include <algorithm>

#include "common/json_view.h"

namespace minifyd::protocol {
namespace {

ErrorKind parse_error_kind(const std::string& text) {
  for (ErrorKind kind : {ErrorKind::invalid_input, ErrorKind::io, ErrorKind::corrupt, ErrorKind::not_found,
                         ErrorKind::unsupported})
    if (text == to_string(kind)) return kind;
  return ErrorKind::io;
}

}  // namespace

const std::vector<std::string>& daemon_request_types() {
  static const std::vector<std::string> types = {"submit", "status", "list",  "watch",   "result",
                                                 "cancel", "query",  "stats", "shutdown"};
  return types;
}

nlohmann::json encode(const DaemonGreeting& greeting) {
  return nlohmann::json{{"protocol", daemon_protocol_name}, {"version", greeting.version}, {"pid", greeting.pid}};
}

Expected<DaemonGreeting> decode_daemon_greeting(std::string_view line) {
  auto json = parse_json(line);
  std::string name;
  DaemonGreeting greeting;
  if (!json || !json->is_object() || !JsonView(*json).read("protocol", name) || name != daemon_protocol_name)
    return make_error(ErrorKind::unsupported, "the socket's peer is not minifyd (it greeted with: " +
                                                  std::string(line.substr(0, 200)) + ")");
  if (auto read = JsonView(*json).read("version", greeting.version); !read) return read.error().with_context("greeting");
  if (greeting.version != daemon_protocol_version)
    return make_error(ErrorKind::unsupported, "minifyd speaks protocol version " + std::to_string(greeting.version) +
                                                  ", this client " + std::to_string(daemon_protocol_version) +
                                                  ": use the minify that came with that minifyd");
  if (auto read = JsonView(*json).read_optional("pid", greeting.pid); !read) return read.error().with_context("greeting");
  return greeting;
}

Expected<DaemonRequest> decode_daemon_request(std::string_view line) {
  auto json = parse_json(line);
  if (!json) return make_error(ErrorKind::invalid_input, "the request is not JSON: " + json.error().message);
  if (!json->is_object()) return make_error(ErrorKind::invalid_input, "the request is not a JSON object");
  auto type = json->find("type");
  if (type == json->end() || !type->is_string())
    return make_error(ErrorKind::invalid_input, "the request has no string \"type\"");
  const auto& known = daemon_request_types();
  std::string name = type->get<std::string>();
  if (std::find(known.begin(), known.end(), name) == known.end()) {
    std::string list;
    for (const std::string& each : known) list += (list.empty() ? "" : ", ") + each;
    return make_error(ErrorKind::invalid_input, "unknown request type \"" + name + "\" (known: " + list + ")");
  }
  return DaemonRequest{std::move(name), std::move(*json)};
}

nlohmann::json error_reply(const Error& error) {
  return nlohmann::json{{"ok", false}, {"error", {{"kind", to_string(error.kind)}, {"message", error.message}}}};
}

Expected<nlohmann::json> reply_value(nlohmann::json reply) {
  if (!reply.is_object() || !reply.contains("ok"))
    return make_error(ErrorKind::io, "minifyd sent a malformed reply: " + reply.dump().substr(0, 200));
  if (reply.value("ok", false)) return reply;
  const nlohmann::json& error = reply["error"];
  std::string kind = error.is_object() ? error.value("kind", std::string("io")) : "io";
  std::string message = error.is_object() ? error.value("message", std::string("no message")) : error.dump();
  return make_error(parse_error_kind(kind), message);
}

}  // namespace minifyd::protocol
