// What `minify bisect` (and `minify run --bisect`) found, as data: the stage, the subsystem, the
// application and its debug info, the config toggles under which the failure is gone, and every
// probe. Kept in the run's checkpoint (so a daemon's job keeps it with its result), written as
// OUT/bisect.json and rendered into report.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/expected.h"
#include "common/json_view.h"

namespace minifyd::bisect {

inline constexpr const char* bisect_file_name = "bisect.json";

// A probe's outcome, as the judge saw its verdict.
inline constexpr const char* outcome_fails = "fails";    // the same failure (the search's signature rule)
inline constexpr const char* outcome_passes = "passes";  // gone
inline constexpr const char* outcome_other = "fails otherwise";  // another failure: not the bug bisected

struct ProbeRecord {
  std::string stage;                     // the torch.compile backend compiled
  std::string subsystem;                 // "" for a probe of the stage alone
  std::optional<std::uint64_t> enabled;  // applications of the subsystem left on
  std::string outcome;
  std::string detail;  // the other failure's signature, for outcome_other
  double seconds = 0;  // from submission to verdict
};

struct BisectResult {
  std::string stage;      // the first stage that shows the failure
  std::string subsystem;  // the first of its subsystems whose switching off makes it go; "" if none
  std::optional<std::uint64_t> application;  // CompilerBisector's bisect number: the guilty application
  std::string debug_info;                    // of that application (the node lowered, the pass)
  std::string target;  // the lowered node's operator, when debug_info names a node of the graph
  std::vector<std::string> fixed_by;  // config toggles (KEY=VALUE) under which the failure is gone
  std::vector<std::string> notes;     // what the bisect could not cover, and why
  std::vector<ProbeRecord> probes;
  double wall_seconds = 0;
  std::string error;  // why a bisect after a run did not finish (the run's result stands)
};

nlohmann::json encode(const ProbeRecord& probe);
Expected<void> decode(const JsonView& view, ProbeRecord& probe);
nlohmann::json encode(const BisectResult& result);
Expected<void> decode(const JsonView& view, BisectResult& result);

// "inductor / lowerings, application 2 (relu: aten.relu.default)", "aot_eager", ...
std::string describe(const BisectResult& result);
// report.md's section (## Bisect).
std::string render_markdown(const BisectResult& result);

}  // namespace minifyd::bisect
