// Encoding and decoding of a job's events.
#include "protocol/job_events.h"

#include "protocol/json_fields.h"

namespace minifyd::protocol {
namespace {

constexpr const char* progress_name = "progress";
constexpr const char* end_name = "end";

constexpr auto progress_fields = [](auto& event, auto&& field) {
  field("job", event.job);
  field("strategy", event.strategy);
  field("granularity", event.granularity);
  field("nodes", event.nodes);
  field("start_nodes", event.start_nodes);
  field("queries", event.queries);
  field("cache_hits", event.cache_hits);
  field("elapsed_seconds", event.elapsed_seconds);
};

constexpr auto end_fields = [](auto& event, auto&& field) {
  field("job", event.job);
  field("state", event.state);
  field("error", event.error);
  field("message", event.message);
};

}  // namespace

nlohmann::json encode(const ProgressEvent& event) {
  return encode_fields(event, progress_fields, {{"event", progress_name}});
}

Expected<void> decode(const JsonView& view, ProgressEvent& event) {
  return decode_fields(view, event, progress_fields);
}

nlohmann::json encode(const EndEvent& event) {
  nlohmann::json json = event.summary ? encode(*event.summary) : nlohmann::json::object();
  json["event"] = end_name;
  return encode_fields(event, end_fields, std::move(json));
}

Expected<void> decode(const JsonView& view, EndEvent& event) {
  if (auto decoded = decode_fields(view, event, end_fields); !decoded) return decoded.error();
  auto stop = view.optional_field("stop");
  if (!stop) return stop.error();
  if (!*stop) return {};
  RunSummary summary;
  if (auto decoded = decode(view, summary); !decoded) return decoded.error();
  event.summary = std::move(summary);
  return {};
}

nlohmann::json encode(const JobEvent& event) {
  return std::visit([](const auto& alternative) { return encode(alternative); }, event);
}

Expected<void> decode(const JsonView& view, JobEvent& event) {
  std::string name;
  if (auto read = view.read("event", name); !read) return read.error();
  if (name == progress_name) {
    ProgressEvent progress;
    if (auto decoded = decode(view, progress); !decoded) return decoded.error();
    event = std::move(progress);
    return {};
  }
  if (name == end_name) {
    EndEvent end;
    if (auto decoded = decode(view, end); !decoded) return decoded.error();
    event = std::move(end);
    return {};
  }
  return view.error("event: unknown event '" + name + "' (progress, end)");
}

}  // namespace minifyd::protocol
