// The daemon protocol's envelope: the greeting, request decoding with named errors, nesting,
// error replies with tags, and reply values.
#include <catch2/catch.hpp>

#include "protocol/daemon_messages.h"
#include "protocol/daemon_requests.h"
#include "protocol/json_nesting.h"

using namespace minifyd;
using namespace minifyd::protocol;

TEST_CASE("the greeting round-trips, and another version or peer is refused by name", "[daemon_messages]") {
  nlohmann::json greeting = encode(DaemonGreeting{daemon_protocol_version, 4242});
  CHECK(greeting == nlohmann::json{{"minifyd", "daemon"}, {"protocol", 1}, {"pid", 4242}});
  auto decoded = decode_daemon_greeting(to_line(greeting));
  REQUIRE(decoded.has_value());
  CHECK(decoded->pid == 4242);

  auto newer = decode_daemon_greeting("{\"minifyd\": \"daemon\", \"protocol\": 2, \"pid\": 1}");
  REQUIRE_FALSE(newer.has_value());
  CHECK(newer.error().kind == ErrorKind::unsupported);
  CHECK(newer.error().message ==
        "minifyd speaks protocol version 2, this client version 1: use the minify that came with that minifyd");
  auto worker = decode_daemon_greeting("{\"type\": \"hello\", \"protocol\": \"minifyd.worker\"}");
  REQUIRE_FALSE(worker.has_value());
  CHECK(worker.error().message.rfind("the socket's peer is not minifyd (it greeted with: {\"type\"", 0) == 0);
  auto no_pid = decode_daemon_greeting("{\"minifyd\": \"daemon\", \"protocol\": 1}");
  REQUIRE_FALSE(no_pid.has_value());
  CHECK(no_pid.error().message.find("greeting") != std::string::npos);
}

TEST_CASE("a request decodes to its type and whole object", "[daemon_messages]") {
  auto request = decode_daemon_request(std::string_view("{\"type\": \"status\", \"job\": 3, \"tag\": \"t\"}"));
  REQUIRE(request.has_value());
  CHECK(request->type == "status");
  CHECK(request->json["job"] == 3);
  CHECK(request_tag(request->json) == "t");
  CHECK(request_tag(nlohmann::json{{"type", "list"}}).is_null());
  for (const std::string& type : daemon_request_types())
    CHECK(decode_daemon_request(to_line(nlohmann::json{{"type", type}})).has_value());
}

TEST_CASE("each way a line fails to be a request is named", "[daemon_messages]") {
  auto message = [](std::string_view line) {
    auto request = decode_daemon_request(line);
    REQUIRE_FALSE(request.has_value());
    CHECK(request.error().kind == ErrorKind::invalid_input);
    return request.error().message;
  };
  CHECK(message("nope").rfind("the line is not JSON: invalid JSON at byte", 0) == 0);
  CHECK(message("[1]") == "the request is not a JSON object but array");
  CHECK(message("\"status\"") == "the request is not a JSON object but string");
  CHECK(message("{\"job\": 1}") ==
        "the request has no \"type\" (one of: submit, status, list, watch, result, cancel, query, stats, shutdown)");
  CHECK(message("{\"type\": [\"list\"]}") == "the request's \"type\" is array, not a string");
  CHECK(message("{\"type\": \"frobnicate\"}") ==
        "unknown request type \"frobnicate\" (known: submit, status, list, watch, result, cancel, query, stats, "
        "shutdown)");
  CHECK(message("{\"type\": \"" + std::string(5000, 'z') + "\"}").size() < 300);
  CHECK(message(std::string(65, '{')) == "the line nests 65 levels deep, more than the 64 allowed");
}

TEST_CASE("nesting is counted outside strings only", "[daemon_messages]") {
  CHECK(json_nesting_depth("42") == 0);
  CHECK(json_nesting_depth("{\"a\": [1, {\"b\": []}]}") == 4);
  CHECK(json_nesting_depth("[\"[[[{{{\", \"\\\"[[[\"]") == 1);
  CHECK(json_nesting_depth(std::string(64, '[') + std::string(64, ']')) == 64);
  CHECK(json_nesting_depth("]]]][") == 1);
}

TEST_CASE("error replies carry the kind, the message and the tag, and reply values undo them", "[daemon_messages]") {
  Error missing = make_error(ErrorKind::not_found, "no job 17");
  CHECK(error_reply(missing) ==
        nlohmann::json{{"ok", false}, {"error", {{"kind", "not_found"}, {"message", "no job 17"}}}});
  CHECK(error_reply(missing, "mine")["tag"] == "mine");
  CHECK(is_reply(error_reply(missing)));
  CHECK_FALSE(is_reply(nlohmann::json{{"event", "end"}}));

  auto failed = reply_value(error_reply(missing));
  REQUIRE_FALSE(failed.has_value());
  CHECK(failed.error().kind == ErrorKind::not_found);
  CHECK(failed.error().message == "no job 17");
  auto ok = reply_value(nlohmann::json{{"ok", true}, {"id", 7}});
  REQUIRE(ok.has_value());
  CHECK((*ok)["id"] == 7);
  auto malformed = reply_value(nlohmann::json{{"ok", "yes"}});
  REQUIRE_FALSE(malformed.has_value());
  CHECK(malformed.error().message.rfind("minifyd sent a malformed reply", 0) == 0);
}

TEST_CASE("a line quoting a peer's invalid UTF-8 still encodes", "[daemon_messages]") {
  nlohmann::json reply = error_reply(make_error(ErrorKind::invalid_input, std::string("bad \xff\xfe bytes")));
  std::string line = to_line(reply);
  CHECK(line.find("bad ") != std::string::npos);
  CHECK(line.find('\n') == std::string::npos);
}
