// bisect.json's encoding and report.md's section.
#include "daemon/bisect/bisect_result.h"

#include <iomanip>
#include <sstream>

#include "protocol/json_fields.h"

namespace minifyd::bisect {
namespace {

using protocol::decode_fields;
using protocol::encode_fields;

constexpr auto probe_fields = [](auto& probe, auto&& field) {
  field("stage", probe.stage);
  field("subsystem", probe.subsystem, std::string());
  field("enabled", probe.enabled);
  field("outcome", probe.outcome);
  field("detail", probe.detail, std::string());
  field("seconds", probe.seconds);
};

constexpr auto result_fields = [](auto& result, auto&& field) {
  field("stage", result.stage);
  field("subsystem", result.subsystem, std::string());
  field("application", result.application);
  field("debug_info", result.debug_info, std::string());
  field("target", result.target, std::string());
  field("fixed_by", result.fixed_by);
  field("notes", result.notes);
  field("probes", result.probes);
  field("wall_seconds", result.wall_seconds);
  field("error", result.error, std::string());
};

std::string seconds_text(double seconds) {
  std::ostringstream text;
  text << std::fixed << std::setprecision(1) << seconds << " s";
  return text.str();
}

std::string probe_line(const ProbeRecord& probe) {
  std::string line = "| " + probe.stage + " | " + (probe.subsystem.empty() ? "-" : probe.subsystem) + " | ";
  line += probe.enabled ? std::to_string(*probe.enabled) : std::string("-");
  line += " | " + probe.outcome + (probe.detail.empty() ? "" : " (" + probe.detail + ")");
  return line + " | " + seconds_text(probe.seconds) + " |\n";
}

}  // namespace

nlohmann::json encode(const ProbeRecord& probe) { return encode_fields(probe, probe_fields); }
Expected<void> decode(const JsonView& view, ProbeRecord& probe) { return decode_fields(view, probe, probe_fields); }
nlohmann::json encode(const BisectResult& result) {
  return encode_fields(result, result_fields, nlohmann::json{{"format", "minifyd.bisect"}, {"version", 1}});
}
Expected<void> decode(const JsonView& view, BisectResult& result) { return decode_fields(view, result, result_fields); }

std::string describe(const BisectResult& result) {
  std::string text = result.stage;
  if (result.subsystem.empty()) return text;
  text += " / " + result.subsystem;
  if (result.application) text += ", application " + std::to_string(*result.application);
  if (!result.debug_info.empty() || !result.target.empty()) {
    text += " (" + result.debug_info;
    if (!result.target.empty()) text += (result.debug_info.empty() ? "" : ": ") + result.target;
    text += ")";
  }
  return text;
}

std::string render_markdown(const BisectResult& result) {
  std::string text = "## Bisect\n\n";
  if (!result.error.empty()) return text + "The bisect did not finish: " + result.error + "\n";
  text += "The failure first shows in **" + describe(result) + "**";
  text += result.subsystem.empty() ? ": no subsystem of that stage, switched off, makes it go.\n\n" : ".\n\n";
  if (!result.fixed_by.empty()) {
    text += "It is gone with:";
    for (const std::string& toggle : result.fixed_by) text += " `" + toggle + "`";
    text += "\n\n";
  }
  for (const std::string& note : result.notes) text += "- " + note + "\n";
  if (!result.notes.empty()) text += "\n";
  text += std::to_string(result.probes.size()) + " probes in " + seconds_text(result.wall_seconds) +
          " (bisect.json lists them):\n\n";
  text += "| stage | subsystem | applications on | outcome | time |\n|---|---|---|---|---|\n";
  for (const ProbeRecord& probe : result.probes) text += probe_line(probe);
  return text;
}

}  // namespace minifyd::bisect
