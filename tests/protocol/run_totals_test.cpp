// A run's summary and totals: one flat encoding for `minify run --json` and the daemon, decoded with
// errors that name the field.
#include <catch2/catch.hpp>

#include "protocol/json_fields.h"
#include "protocol/run_totals.h"

using namespace minifyd;
using namespace minifyd::protocol;

namespace {

RunSummary minimized_summary() {
  RunSummary summary;
  summary.status = run_status_minimized;
  summary.stop = "finished";
  summary.shape = GraphShape{3, 1, 1};
  summary.start_nodes = 273;
  summary.start_inputs = 2;
  summary.totals = RunTotals{27, 4, 26, 1, 12.5, 2};
  summary.session_queries = 11;
  summary.lineages = 3;
  summary.speculative_queries = 5;
  summary.failure = "crash (SIGSEGV)";
  summary.signature = nlohmann::json{{"kind", "crash"}};
  summary.plain_check = PlainCheck{plain_check_fails, "killed by SIGSEGV", 4.5};
  return summary;
}

std::string decode_error(const nlohmann::json& json) {
  auto decoded = decode_message<RunSummary>(json);
  REQUIRE_FALSE(decoded.has_value());
  CHECK(decoded.error().kind == ErrorKind::invalid_input);
  return decoded.error().message;
}

}  // namespace

TEST_CASE("a run summary is one flat object with the shape's and the totals' keys", "[run_totals]") {
  nlohmann::json json = encode(minimized_summary());
  std::vector<std::string> keys;
  for (const auto& [key, value] : json.items()) keys.push_back(key);
  CHECK(keys == std::vector<std::string>{"cache_hits", "crashes_contained", "failure", "inputs", "lineages",
                                         "nodes", "outputs", "plain_check", "queries", "session_queries", "sessions",
                                         "signature", "speculative_queries", "start_inputs", "start_nodes",
                                         "status", "stop", "timeouts", "wall_seconds"});
  CHECK(json["wall_seconds"] == 12.5);
  CHECK(json["nodes"] == 3);
  CHECK(json["plain_check"] == nlohmann::json{{"outcome", "fails"}, {"detail", "killed by SIGSEGV"}, {"seconds", 4.5}});

  auto decoded = decode_message<RunSummary>(json);
  REQUIRE(decoded.has_value());
  CHECK(encode(*decoded) == json);
  CHECK_FALSE(decoded->error.has_value());
  CHECK(decoded->totals.crashes_contained == 26);
}

TEST_CASE("the totals alone are the checkpoint's \"totals\"", "[run_totals]") {
  nlohmann::json json = encode(RunTotals{42, 7, 3, 1, 12.5, 2});
  CHECK(json == nlohmann::json{{"queries", 42},      {"cache_hits", 7},      {"crashes_contained", 3},
                               {"timeouts", 1},      {"wall_seconds", 12.5}, {"sessions", 2}});
  auto decoded = decode_message<RunTotals>(json);
  REQUIRE(decoded.has_value());
  CHECK(decoded->queries == 42);
  CHECK(decoded->sessions == 2);
}

TEST_CASE("a summary with a field missing or mistyped is refused, naming the field", "[run_totals]") {
  nlohmann::json json = encode(minimized_summary());
  json.erase("queries");
  CHECK(decode_error(json) == "missing field 'queries'");
  json = encode(minimized_summary());
  json["start_nodes"] = "273";
  CHECK(decode_error(json) == "start_nodes: expected an int, got a string");
  json["start_nodes"] = -1;
  CHECK(decode_error(json) == "start_nodes: must not be negative");
  json = encode(minimized_summary());
  json["error"] = 3;
  CHECK(decode_error(json) == "error: expected a string, got an int");
  CHECK(decode_error(nlohmann::json::array()) == "expected an object, got an array");
}
