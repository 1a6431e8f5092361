// The daemon's requests: each encodes with its type and decodes from an envelope, with errors
// that name the field.
#include <catch2/catch.hpp>

#include "protocol/daemon_requests.h"

using namespace minifyd;
using namespace minifyd::protocol;

namespace {

TypedDaemonRequest decoded(const nlohmann::json& json) {
  auto envelope = decode_request_object(json);
  REQUIRE(envelope.has_value());
  auto typed = decode_typed_request(*envelope);
  REQUIRE(typed.has_value());
  return *typed;
}

std::string refused(const nlohmann::json& json) {
  auto envelope = decode_request_object(json);
  REQUIRE(envelope.has_value());
  auto typed = decode_typed_request(*envelope);
  REQUIRE_FALSE(typed.has_value());
  CHECK(typed.error().kind == ErrorKind::invalid_input);
  return typed.error().message;
}

}  // namespace

TEST_CASE("every request type has a typed request, in the order of daemon_request_types()", "[daemon_requests]") {
  std::vector<std::string> types = {"submit", "status", "list",  "watch",   "result",
                                    "cancel", "query",  "stats", "shutdown"};
  CHECK(daemon_request_types() == types);
  CHECK(encode(ListRequest{}) == nlohmann::json{{"type", "list"}});
  CHECK(encode(StatsRequest{}) == nlohmann::json{{"type", "stats"}});
  CHECK(encode(DaemonShutdownRequest{}) == nlohmann::json{{"type", "shutdown"}});
  CHECK(std::holds_alternative<DaemonShutdownRequest>(decoded({{"type", "shutdown"}, {"tag", 3}})));
}

TEST_CASE("requests round-trip through the envelope", "[daemon_requests]") {
  nlohmann::json spec{{"evaluation", {{"backend", "eager"}}}};
  nlohmann::json submit = encode(SubmitRequest{"/graphs/g", spec, 5});
  CHECK(submit == nlohmann::json{{"type", "submit"}, {"graph_dir", "/graphs/g"}, {"spec", spec}, {"priority", 5}});
  auto typed = std::get<SubmitRequest>(decoded(submit));
  CHECK(typed.graph_dir == "/graphs/g");
  CHECK(typed.spec == spec);
  CHECK(typed.priority == 5);
  // priority is optional, 0 when absent (and left out when 0).
  CHECK(std::get<SubmitRequest>(decoded({{"type", "submit"}, {"graph_dir", "/g"}, {"spec", spec}})).priority == 0);
  CHECK_FALSE(encode(SubmitRequest{"/g", spec, 0}).contains("priority"));

  CHECK(encode(StatusRequest{}) == nlohmann::json{{"type", "status"}});
  CHECK_FALSE(std::get<StatusRequest>(decoded({{"type", "status"}})).job.has_value());
  CHECK(std::get<StatusRequest>(decoded(encode(StatusRequest{7}))).job == 7);
  CHECK(std::get<WatchRequest>(decoded(encode(WatchRequest{7}))).job == 7);
  CHECK(std::get<CancelJobRequest>(decoded(encode(CancelJobRequest{8}))).job == 8);
  auto result = std::get<ResultRequest>(decoded(encode(ResultRequest{7, "/out"})));
  CHECK(result.job == 7);
  CHECK(result.out == "/out");
  auto query = std::get<QueryRequest>(decoded(encode(QueryRequest{"/g", {{"backend", "eager"}}})));
  CHECK(query.evaluation["backend"] == "eager");
}

TEST_CASE("a request with a field missing or mistyped is refused, naming the field", "[daemon_requests]") {
  CHECK(refused({{"type", "watch"}}) == "missing field 'job'");
  CHECK(refused({{"type", "status"}, {"job", "seven"}}) == "job: expected an int, got a string");
  CHECK(refused({{"type", "result"}, {"job", 1}}) == "missing field 'out'");
  CHECK(refused({{"type", "submit"}, {"graph_dir", "/g"}}) == "missing field 'spec'");
  CHECK(refused({{"type", "submit"}, {"graph_dir", "/g"}, {"spec", nlohmann::json::object()}, {"priority", true}}) ==
        "priority: expected an int, got a bool");
  CHECK(refused({{"type", "query"}, {"graph_dir", 3}, {"evaluation", {}}}) == "graph_dir: expected a string, got an int");
}

TEST_CASE("a submit's priority is held to its range, never wrapped (issue 52)", "[daemon_requests]") {
  nlohmann::json spec = nlohmann::json::object();
  CHECK(std::get<SubmitRequest>(decoded({{"type", "submit"}, {"graph_dir", "/g"}, {"spec", spec}, {"priority", -1000000}}))
            .priority == -1000000);
  CHECK(refused({{"type", "submit"}, {"graph_dir", "/g"}, {"spec", spec}, {"priority", 2147483648LL}}) ==
        "priority: 2147483648 is out of range: must be an integer from -1000000 to 1000000");
  CHECK(refused({{"type", "submit"}, {"graph_dir", "/g"}, {"spec", spec}, {"priority", -1000001}}) ==
        "priority: -1000001 is out of range: must be an integer from -1000000 to 1000000");
}
