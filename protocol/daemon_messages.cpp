// The daemon protocol's messages.
#include "protocol/daemon_messages.h"

#include <algorithm>
#include <utility>

#include "common/json_view.h"
#include "protocol/json_nesting.h"

namespace minifyd::protocol {
namespace {

constexpr const char* greeting_role = "daemon";  // the value of the greeting's "minifyd"

ErrorKind parse_error_kind(const std::string& text) {
  for (ErrorKind kind : {ErrorKind::invalid_input, ErrorKind::io, ErrorKind::corrupt, ErrorKind::not_found,
                         ErrorKind::unsupported, ErrorKind::no_space})
    if (text == to_string(kind)) return kind;
  return ErrorKind::io;
}

}  // namespace

std::string excerpt(std::string_view text, std::size_t limit) {
  return text.size() <= limit ? std::string(text) : std::string(text.substr(0, limit)) + "...";
}

nlohmann::json encode(const DaemonGreeting& greeting) {
  return nlohmann::json{{"minifyd", greeting_role}, {"protocol", greeting.protocol}, {"pid", greeting.pid}};
}

std::string to_line(const nlohmann::json& message) {
  return message.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Expected<nlohmann::json> parse_daemon_line(std::string_view line) {
  if (std::size_t depth = json_nesting_depth(line); depth > daemon_max_nesting)
    return make_error(ErrorKind::invalid_input, "the line nests " + std::to_string(depth) +
                                                    " levels deep, more than the " +
                                                    std::to_string(daemon_max_nesting) + " allowed");
  auto json = parse_json(line);
  if (!json) return make_error(ErrorKind::invalid_input, "the line is not JSON: " + json.error().message);
  return json;
}

Expected<DaemonGreeting> decode_daemon_greeting(std::string_view line) {
  auto json = parse_daemon_line(line);
  std::string role;
  if (!json || !json->is_object() || !JsonView(*json).read("minifyd", role) || role != greeting_role)
    return make_error(ErrorKind::unsupported,
                      "the socket's peer is not minifyd (it greeted with: " + excerpt(line, 200) + ")");
  DaemonGreeting greeting;
  JsonView view(*json, "greeting");
  if (auto read = view.read("protocol", greeting.protocol); !read) return read.error();
  if (greeting.protocol != daemon_protocol_version)
    return make_error(ErrorKind::unsupported, "minifyd speaks protocol version " + std::to_string(greeting.protocol) +
                                                  ", this client version " + std::to_string(daemon_protocol_version) +
                                                  ": use the minify that came with that minifyd");
  if (auto read = view.read("pid", greeting.pid); !read) return read.error();
  return greeting;
}

Expected<nlohmann::json> parse_request_line(std::string_view line) {
  auto json = parse_daemon_line(line);
  if (!json) return json.error();
  if (!json->is_object())
    return make_error(ErrorKind::invalid_input,
                      std::string("the request is not a JSON object but ") + json->type_name());
  return json;
}

nlohmann::json request_tag(const nlohmann::json& request) {
  auto tag = request.find("tag");
  return tag == request.end() ? nlohmann::json() : *tag;
}

nlohmann::json error_reply(const Error& error, const nlohmann::json& tag) {
  nlohmann::json reply{{"ok", false}, {"error", {{"kind", to_string(error.kind)}, {"message", error.message}}}};
  if (!tag.is_null()) reply["tag"] = tag;
  return reply;
}

nlohmann::json ok_reply(nlohmann::json body, const nlohmann::json& tag) {
  body["ok"] = true;
  if (!tag.is_null()) body["tag"] = tag;
  return body;
}

bool is_reply(const nlohmann::json& message) { return message.is_object() && message.contains("ok"); }

Expected<nlohmann::json> reply_value(nlohmann::json reply) {
  if (!is_reply(reply) || !reply["ok"].is_boolean())
    return make_error(ErrorKind::io, "minifyd sent a malformed reply: " + excerpt(reply.dump(), 200));
  if (reply["ok"].get<bool>()) return reply;
  std::string kind, message;
  auto error = JsonView(reply).field("error");
  auto read = error ? error->read("kind", kind) : Expected<void>(error.error());
  if (read) read = error->read("message", message);
  if (!read) return make_error(ErrorKind::io, "minifyd sent a malformed error reply: " + read.error().message);
  return make_error(parse_error_kind(kind), message);
}

}  // namespace minifyd::protocol
