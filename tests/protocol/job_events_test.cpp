// The watch events: progress, and the end with the run's summary when the job is done.
#include <catch2/catch.hpp>

#include "protocol/job_events.h"
#include "protocol/json_fields.h"

using namespace minifyd;
using namespace minifyd::protocol;

namespace {

JobEvent round_trip(const JobEvent& event) {
  auto decoded = decode_message<JobEvent>(encode(event));
  REQUIRE(decoded.has_value());
  CHECK(encode(*decoded) == encode(event));
  return *decoded;
}

}  // namespace

TEST_CASE("a progress event round-trips with its fields on the wire", "[job_events]") {
  ProgressEvent progress{7, "delta-debugging", 32, 120, 273, 14, 2, 3.1};
  nlohmann::json json = encode(JobEvent(progress));
  CHECK(json == nlohmann::json{{"event", "progress"}, {"job", 7},         {"strategy", "delta-debugging"},
                               {"granularity", 32},   {"nodes", 120},     {"start_nodes", 273},
                               {"queries", 14},       {"cache_hits", 2},  {"elapsed_seconds", 3.1}});
  JobEvent decoded = round_trip(progress);
  CHECK(std::get<ProgressEvent>(decoded).nodes == 120);
}

TEST_CASE("an end event carries the summary when done, an error when failed, nothing else otherwise",
          "[job_events]") {
  RunSummary summary;
  summary.status = run_status_minimized;
  summary.stop = "finished";
  summary.shape = GraphShape{3, 1, 1};
  EndEvent done{7, "done", std::nullopt, std::nullopt, summary};
  nlohmann::json json = encode(JobEvent(done));
  CHECK(json["event"] == "end");
  CHECK(json["state"] == "done");
  CHECK(json["nodes"] == 3);
  CHECK_FALSE(json.contains("error"));
  REQUIRE(std::get<EndEvent>(round_trip(done)).summary.has_value());

  EndEvent failed{8, "failed", std::string("no worker serves it"), std::nullopt, std::nullopt};
  CHECK(encode(JobEvent(failed)) ==
        nlohmann::json{{"event", "end"}, {"job", 8}, {"state", "failed"}, {"error", "no worker serves it"}});
  CHECK_FALSE(std::get<EndEvent>(round_trip(failed)).summary.has_value());
  CHECK(encode(JobEvent(EndEvent{9, "cancelled", std::nullopt, std::nullopt, std::nullopt})) ==
        nlohmann::json{{"event", "end"}, {"job", 9}, {"state", "cancelled"}});
}

TEST_CASE("an event that is unknown, unnamed or incomplete is refused by field", "[job_events]") {
  auto error = [](const nlohmann::json& json) {
    auto decoded = decode_message<JobEvent>(json);
    REQUIRE_FALSE(decoded.has_value());
    return decoded.error().message;
  };
  CHECK(error(nlohmann::json{{"job", 1}}) == "missing field 'event'");
  CHECK(error(nlohmann::json{{"event", "paused"}}) == "event: unknown event 'paused' (progress, end)");
  CHECK(error(nlohmann::json{{"event", "end"}, {"job", 1}}) == "missing field 'state'");
  nlohmann::json progress = encode(JobEvent(ProgressEvent{1, "", 0, 5, 9, 1, 0, 0.5}));
  progress["queries"] = 1.5;
  CHECK(error(progress) == "queries: expected an int, got a float");
  // A done end event with a summary that lacks a field.
  nlohmann::json end{{"event", "end"}, {"job", 1}, {"state", "done"}, {"stop", "finished"}};
  CHECK(error(end) == "missing field 'status'");
}
