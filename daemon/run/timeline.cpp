#include "daemon/run/timeline.h"

#include <type_traits>
#include <variant>

namespace minifyd::run {
namespace {

using nlohmann::json;

const char* event_name(pool::PoolEvent::Kind kind) {
  switch (kind) {
    case pool::PoolEvent::Kind::worker_launched: return "worker_launched";
    case pool::PoolEvent::Kind::worker_ready: return "worker_ready";
    case pool::PoolEvent::Kind::worker_start_failed: return "worker_start_failed";
    case pool::PoolEvent::Kind::worker_retired: return "worker_retired";
    case pool::PoolEvent::Kind::request_sent: return "request_sent";
    case pool::PoolEvent::Kind::request_answered: return "request_answered";
  }
  return "?";
}

// The request's type, and for those that carry a graph, its node count.
void describe_request(const protocol::WorkerRequest& request, json& line) {
  std::visit(
      [&line](const auto& r) {
        using T = std::decay_t<decltype(r)>;
        if constexpr (std::is_same_v<T, protocol::EvaluateRequest> || std::is_same_v<T, protocol::PropagateRequest> ||
                      std::is_same_v<T, protocol::AnalyzeRequest>) {
          line["request"] = std::is_same_v<T, protocol::EvaluateRequest>    ? "evaluate"
                            : std::is_same_v<T, protocol::PropagateRequest> ? "propagate"
                                                                            : "analyze";
          if (auto nodes = r.graph.find("nodes"); nodes != r.graph.end() && nodes->is_array())
            line["nodes"] = nodes->size();
        } else {
          line["request"] = "control";
        }
      },
      request);
}

// How the request ended: its verdict (with the worker's own times), a reply of another kind, or the
// fault that ended it.
void describe_outcome(const pool::WorkerOutcome& outcome, json& line) {
  if (const auto* fault = std::get_if<pool::WorkerFault>(&outcome)) {
    line["outcome"] = "fault";
    line["fault"] = fault->describe();
    return;
  }
  const auto& reply = std::get<protocol::WorkerReply>(outcome);
  if (const auto* evaluated = std::get_if<protocol::EvaluateReply>(&reply)) {
    line["outcome"] = evaluated->verdict.pass ? "pass" : "fail";
    if (!evaluated->verdict.pass) line["failure"] = protocol::to_string(evaluated->verdict.kind);
    line["load_ms"] = evaluated->load_ms;
    line["compile_ms"] = evaluated->compile_ms;
    line["run_ms"] = evaluated->run_ms;
    line["check_ms"] = evaluated->check_ms;
    if (evaluated->device_wait_ms > 0) line["device_wait_ms"] = evaluated->device_wait_ms;
    if (evaluated->start_wait_ms > 0) line["start_wait_ms"] = evaluated->start_wait_ms;
    if (evaluated->retiring) line["retiring"] = true;
  } else if (std::holds_alternative<protocol::ErrorReply>(reply)) {
    line["outcome"] = "error";
  } else {
    line["outcome"] = "reply";
    if (const auto* analyzed = std::get_if<protocol::AnalyzeReply>(&reply)) {
      line["compile_ms"] = analyzed->compile_ms;
      line["run_ms"] = analyzed->run_ms;
    }
  }
}

}  // namespace

Expected<std::unique_ptr<Timeline>> Timeline::open(const std::filesystem::path& path) {
  std::ofstream out(path, std::ios::trunc);
  if (!out) return make_error(ErrorKind::io, "cannot write the timeline " + path.string());
  return std::unique_ptr<Timeline>(new Timeline(std::move(out)));
}

pool::PoolEventSink Timeline::pool_sink() {
  return [this](const pool::PoolEvent& event) {
    json line{{"event", event_name(event.kind)}, {"pid", event.pid}};
    if (event.kind != pool::PoolEvent::Kind::worker_retired) line["slot"] = event.slot;
    if (event.kind == pool::PoolEvent::Kind::worker_launched) line["spare"] = event.spare;
    if (event.ticket) line["ticket"] = event.ticket;
    if (event.request) describe_request(*event.request, line);
    if (event.outcome) describe_outcome(*event.outcome, line);
    write(std::move(line));
  };
}

void Timeline::mark(std::string_view what, std::string_view edge) {
  write(json{{"event", "phase"}, {"phase", what}, {"edge", edge}});
}

void Timeline::write(json line) {
  std::lock_guard<std::mutex> lock(mutex_);
  json stamped{{"t", std::chrono::duration<double>(std::chrono::steady_clock::now() - opened_).count()}};
  stamped.update(line);
  // Flushed line by line: a run that is killed leaves its timeline up to then.
  out_ << stamped.dump() << std::endl;
}

TimelinePhase::TimelinePhase(Timeline* timeline, std::string_view what) : timeline_(timeline), what_(what) {
  if (timeline_) timeline_->mark(what_, "begin");
}

TimelinePhase::~TimelinePhase() {
  if (timeline_) timeline_->mark(what_, "end");
}

}  // namespace minifyd::run
