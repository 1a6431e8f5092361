// The requests a client sends minifyd (docs/daemon.md), one struct per type, each naming its type
// on the wire and its reply's struct (daemon_replies.h). Paths and specs are checked by the daemon
// when it serves the request; decoding checks the fields' presence and JSON types.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/expected.h"
#include "common/json_view.h"
#include "protocol/daemon_messages.h"
#include "protocol/daemon_replies.h"

namespace minifyd::protocol {

// Queue a job minimizing the graph in graph_dir.
struct SubmitRequest {
  static constexpr const char* type = "submit";
  using Reply = SubmitReply;
  std::string graph_dir;  // absolute
  nlohmann::json spec;    // the run spec, as checkpoint.json's "spec"
  std::int64_t priority = 0;  // higher runs first; absent means 0
};

struct StatusRequest {
  static constexpr const char* type = "status";
  using Reply = StatusReply;
  std::optional<std::int64_t> job;  // unset: every job, as list
};

struct ListRequest {
  static constexpr const char* type = "list";
  using Reply = ListReply;
};

// The reply, then the job's events (job_events.h) on the same connection until its end.
struct WatchRequest {
  static constexpr const char* type = "watch";
  using Reply = WatchReply;
  std::int64_t job = 0;
};

// Write a done job's outputs into out, as `minify run` writes them.
struct ResultRequest {
  static constexpr const char* type = "result";
  using Reply = ResultReply;
  std::int64_t job = 0;
  std::string out;  // absolute
};

struct CancelJobRequest {
  static constexpr const char* type = "cancel";
  using Reply = CancelJobReply;
  std::int64_t job = 0;
};

// Evaluate the graph in graph_dir once on one of the daemon's workers.
struct QueryRequest {
  static constexpr const char* type = "query";
  using Reply = QueryReply;
  std::string graph_dir;     // absolute
  nlohmann::json evaluation;  // as the run spec's "evaluation"
};

struct StatsRequest {
  static constexpr const char* type = "stats";
  using Reply = StatsReply;
};

// Stop gracefully: running jobs checkpoint and resume at the next start.
struct DaemonShutdownRequest {
  static constexpr const char* type = "shutdown";
  using Reply = DaemonShutdownReply;
};

// Every request, in the order of daemon_request_types().
using TypedDaemonRequest = std::variant<SubmitRequest, StatusRequest, ListRequest, WatchRequest, ResultRequest,
                                        CancelJobRequest, QueryRequest, StatsRequest, DaemonShutdownRequest>;

// With "type"; the envelope's "tag" is the sender's to add.
nlohmann::json encode(const SubmitRequest& request);
nlohmann::json encode(const StatusRequest& request);
nlohmann::json encode(const ListRequest& request);
nlohmann::json encode(const WatchRequest& request);
nlohmann::json encode(const ResultRequest& request);
nlohmann::json encode(const CancelJobRequest& request);
nlohmann::json encode(const QueryRequest& request);
nlohmann::json encode(const StatsRequest& request);
nlohmann::json encode(const DaemonShutdownRequest& request);

// The request types the daemon serves, in the order error messages list them.
const std::vector<std::string>& daemon_request_types();
// A request object's envelope. Errors: no "type", a "type" that is no string, an unknown type (listing
// the known ones).
Expected<DaemonRequest> decode_request_object(nlohmann::json object);
// A request line's envelope: parse_request_line(), then decode_request_object().
Expected<DaemonRequest> decode_daemon_request(std::string_view line);

// The typed request of an envelope decode_request_object() accepted. Errors name the bad field.
Expected<TypedDaemonRequest> decode_typed_request(const DaemonRequest& request);

}  // namespace minifyd::protocol
