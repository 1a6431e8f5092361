// The daemon's replies: the shapes the wire carries, and a client's decoding, which names the path
// of a missing or mistyped field instead of reading a 0.
#include <catch2/catch.hpp>

#include "protocol/daemon_replies.h"

using namespace minifyd;
using namespace minifyd::protocol;

namespace {

JobInfo running_job() {
  JobInfo job;
  job.id = 7;
  job.state = "running";
  job.priority = 1;
  job.graph = "/graphs/g";
  job.submitted_at = 1795359883.87;
  job.started_at = 1795359884.0;
  job.sessions = 1;
  job.progress = ProgressEvent{7, "delta-debugging", 32, 120, 273, 14, 2, 3.1};
  return job;
}

template <class Reply>
Reply round_trip(const Reply& reply) {
  auto decoded = decode_daemon_reply<Reply>(encode(reply), "test");
  REQUIRE(decoded.has_value());
  CHECK(encode(*decoded) == encode(reply));
  return *decoded;
}

template <class Reply>
std::string malformed(const nlohmann::json& json, const char* type) {
  auto decoded = decode_daemon_reply<Reply>(json, type);
  REQUIRE_FALSE(decoded.has_value());
  CHECK(decoded.error().kind == ErrorKind::io);
  return decoded.error().message;
}

}  // namespace

TEST_CASE("a job's description keeps optional fields off the wire until they are set", "[daemon_replies]") {
  nlohmann::json json = encode(running_job());
  CHECK(json["progress"]["event"] == "progress");
  for (const char* absent : {"finished_at", "error", "cancel_requested", "submitter_uid"}) CHECK_FALSE(json.contains(absent));
  JobInfo cancelling = running_job();
  cancelling.cancel_requested = true;
  cancelling.error = "cancelled";
  cancelling.submitter_uid = 4294967294;
  CHECK(encode(cancelling)["cancel_requested"] == true);
  CHECK(encode(cancelling)["submitter_uid"] == 4294967294);
  JobInfo decoded = round_trip(WatchReply{cancelling}).job;
  CHECK(decoded.cancel_requested);
  CHECK(decoded.submitter_uid == std::optional<std::int64_t>(4294967294));

  JobInfo done = running_job();
  done.state = "done";
  RunSummary summary;
  summary.status = run_status_minimized;
  summary.stop = "finished";
  done.progress = EndEvent{7, "done", std::nullopt, std::nullopt, summary};
  CHECK(std::holds_alternative<EndEvent>(*round_trip(WatchReply{done}).job.progress));
}

TEST_CASE("status answers one job, or every job when it names none", "[daemon_replies]") {
  StatusReply one = round_trip(StatusReply{running_job(), {}});
  REQUIRE(one.job.has_value());
  CHECK(one.job->id == 7);
  CHECK_FALSE(encode(StatusReply{running_job(), {}}).contains("jobs"));
  StatusReply every = round_trip(StatusReply{std::nullopt, {running_job(), running_job()}});
  CHECK_FALSE(every.job.has_value());
  CHECK(every.jobs.size() == 2);
  CHECK(encode(StatusReply{std::nullopt, {running_job()}}) == encode(ListReply{{running_job()}}));
  CHECK(malformed<StatusReply>({{"ok", true}}, "status") ==
        "minifyd sent a malformed status reply: missing field 'job' (or 'jobs')");
}

TEST_CASE("a reply with a field missing or mistyped names the field's path", "[daemon_replies]") {
  nlohmann::json reply = encode(StatusReply{running_job(), {}});
  reply["job"]["progress"].erase("nodes");
  CHECK(malformed<StatusReply>(reply, "status") ==
        "minifyd sent a malformed status reply: job.progress: missing field 'nodes'");
  reply = encode(ListReply{{running_job(), running_job()}});
  reply["jobs"][1]["id"] = "7";
  CHECK(malformed<ListReply>(reply, "list") ==
        "minifyd sent a malformed list reply: jobs[1].id: expected an int, got a string");
  CHECK(malformed<SubmitReply>({{"ok", true}}, "submit") == "minifyd sent a malformed submit reply: missing field 'id'");
  nlohmann::json cancel{{"job", 8}, {"state", 3}};
  CHECK(malformed<CancelJobReply>(cancel, "cancel") ==
        "minifyd sent a malformed cancel reply: state: expected a string, got an int");
}

TEST_CASE("the result reply is the run's summary with out, as minify run --json prints it", "[daemon_replies]") {
  RunSummary summary;
  summary.status = run_status_minimized;
  summary.stop = "query_budget";
  summary.shape = GraphShape{3, 1, 1};
  summary.start_nodes = 273;
  summary.totals.queries = 27;
  nlohmann::json json = encode(ResultReply{summary, "/out"});
  nlohmann::json expected = encode(summary);
  expected["out"] = "/out";
  CHECK(json == expected);
  ResultReply decoded = round_trip(ResultReply{summary, "/out"});
  CHECK(decoded.summary.totals.queries == 27);
  json.erase("start_inputs");
  CHECK(malformed<ResultReply>(json, "result") ==
        "minifyd sent a malformed result reply: missing field 'start_inputs'");
}

TEST_CASE("query, stats and shutdown replies round-trip", "[daemon_replies]") {
  QueryResult result;
  result.fails = true;
  result.verdict.pass = false;
  result.verdict.kind = FailureKind::crash;
  result.verdict.signal = "SIGSEGV";
  result.summary = "fail: crash (SIGSEGV)";
  result.compile_ms = 0.5;
  result.run_ms = 67.5;
  QueryReply query = round_trip(QueryReply{result});
  CHECK(query.result.verdict.signal == "SIGSEGV");
  CHECK_FALSE(encode(QueryResult{}).contains("compile_ms"));
  nlohmann::json bad_verdict = encode(QueryReply{result});
  bad_verdict["result"]["verdict"] = "crash";
  CHECK(malformed<QueryReply>(bad_verdict, "query").rfind("minifyd sent a malformed query reply: result.verdict: ", 0) == 0);

  StatsReply stats;
  stats.pool.slots = 2;
  stats.pool.crashes_contained = 26;
  WorkerHello hello;
  hello.pid = 4242;
  hello.torch_version = "2.5.1";
  stats.pool.workers = {hello};
  stats.jobs.done = 3;
  stats.connections.open = 1;
  stats.max_running_jobs = 2;
  stats.hosts = {HostFigures{"gpu-host-1", 8, "0,1", 2, 1700000000.5, 1700000100.25}};
  StatsReply decoded = round_trip(stats);
  CHECK(decoded.pool.workers.at(0).pid == 4242);
  CHECK(decoded.hosts.at(0).gpus == "0,1");
  CHECK(decoded.hosts.at(0).heartbeat_at == 1700000100.25);
  nlohmann::json json = encode(stats);
  CHECK(json["pool"]["slots"] == 2);
  json["pool"]["workers"][0].erase("torch_version");
  CHECK(malformed<StatsReply>(json, "stats") ==
        "minifyd sent a malformed stats reply: pool.workers[0]: missing field 'torch_version'");

  CHECK(encode(round_trip(DaemonShutdownReply{2})) == nlohmann::json{{"running_jobs", 2}});
}
