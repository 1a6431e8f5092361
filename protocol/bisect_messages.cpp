// Encoding and decoding of a bisect probe and what it observed.
#include "protocol/bisect_messages.h"

#include "protocol/json_fields.h"

namespace minifyd::protocol {
namespace {

constexpr auto probe_fields = [](auto& probe, auto&& field) {
  field("subsystem", probe.subsystem);
  field("enabled", probe.enabled);
};

constexpr auto subsystem_fields = [](auto& subsystem, auto&& field) {
  field("name", subsystem.name);
  field("kind", subsystem.kind);
  field("options", subsystem.options, std::map<std::string, std::string>{});
  field("source", subsystem.source, std::string());
};

constexpr auto plan_fields = [](auto& plan, auto&& field) {
  field("stages", plan.stages, std::vector<std::string>{});
  field("skipped", plan.skipped, std::vector<std::string>{});
  field("subsystems", plan.subsystems, std::map<std::string, std::vector<BisectSubsystem>>{});
  field("unsupported", plan.unsupported, std::string());
};

constexpr auto observation_fields = [](auto& observation, auto&& field) {
  field("plan", observation.plan);  // optional
  field("applications", observation.applications, std::map<std::string, std::uint64_t>{});
  field("debug_info", observation.debug_info, std::vector<std::string>{});
};

}  // namespace

nlohmann::json encode(const BisectProbe& probe) { return encode_fields(probe, probe_fields); }
Expected<void> decode(const JsonView& view, BisectProbe& probe) {
  if (auto read = decode_fields(view, probe, probe_fields); !read) return read;
  if (probe.enabled && !probe.subsystem) return view.error("enabled: only with a subsystem");
  return {};
}

nlohmann::json encode(const BisectSubsystem& subsystem) { return encode_fields(subsystem, subsystem_fields); }
Expected<void> decode(const JsonView& view, BisectSubsystem& subsystem) {
  if (auto read = decode_fields(view, subsystem, subsystem_fields); !read) return read;
  if (subsystem.kind != bisect_kind_applications && subsystem.kind != bisect_kind_config)
    return view.error("kind: unknown kind '" + subsystem.kind + "' (applications, config)");
  return {};
}

nlohmann::json encode(const BisectPlan& plan) { return encode_fields(plan, plan_fields); }
Expected<void> decode(const JsonView& view, BisectPlan& plan) { return decode_fields(view, plan, plan_fields); }

nlohmann::json encode(const BisectObservation& observation) { return encode_fields(observation, observation_fields); }
Expected<void> decode(const JsonView& view, BisectObservation& observation) {
  return decode_fields(view, observation, observation_fields);
}

}  // namespace minifyd::protocol
