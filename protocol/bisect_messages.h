// What a bisect probe asks of a torch.compile worker and what it reports back (docs/protocol.md,
// docs/bisect.md): carried by an evaluate request and its verdict reply. The worker hooks the
// compiler where PyTorch's CompilerBisector does; the coordinator (bisect/bisector.h) runs the search.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/expected.h"
#include "common/json_view.h"

namespace minifyd::protocol {

// The probe: with no subsystem, the compile only counts each subsystem's applications; with one,
// its applications from the `enabled`-th on (all of them for 0) are switched off.
struct BisectProbe {
  std::optional<std::string> subsystem;
  std::optional<std::uint64_t> enabled;
};

inline constexpr const char* bisect_kind_applications = "applications";  // bisected to one application
inline constexpr const char* bisect_kind_config = "config";              // a config toggle, tried once

// One subsystem of a stage, in the order CompilerBisector tries them.
struct BisectSubsystem {
  std::string name;
  std::string kind = bisect_kind_applications;
  std::map<std::string, std::string> options;  // a config toggle's backend options
  std::string source;  // "CompilerBisector", or "minifyd" for a toggle CompilerBisector does not try

  bool operator==(const BisectSubsystem& other) const {
    return name == other.name && kind == other.kind && options == other.options && source == other.source;
  }
};

// What the worker's torch can bisect: the stages (torch.compile backends, in CompilerBisector's
// order) and their subsystems; `unsupported` says why there are none.
struct BisectPlan {
  std::vector<std::string> stages;
  std::vector<std::string> skipped;  // CompilerBisector's stages this worker does not probe
  std::map<std::string, std::vector<BisectSubsystem>> subsystems;
  std::string unsupported;
};

// What one probe saw while the candidate compiled; the plan comes with a probe of a stage alone.
struct BisectObservation {
  std::optional<BisectPlan> plan;
  std::map<std::string, std::uint64_t> applications;  // by subsystem, of the probe's stage
  std::vector<std::string> debug_info;  // each application of the probed subsystem (the node lowered, the pass)
};

nlohmann::json encode(const BisectProbe& probe);
Expected<void> decode(const JsonView& view, BisectProbe& probe);
nlohmann::json encode(const BisectSubsystem& subsystem);
Expected<void> decode(const JsonView& view, BisectSubsystem& subsystem);
nlohmann::json encode(const BisectPlan& plan);
Expected<void> decode(const JsonView& view, BisectPlan& plan);
nlohmann::json encode(const BisectObservation& observation);
Expected<void> decode(const JsonView& view, BisectObservation& observation);

}  // namespace minifyd::protocol
