// What a worker's `analyze` measured of one node's value (docs/protocol.md#analyze): the compiled
// value and eager's, each against the fp64 reference, the seeds' same() on the three, and whether
// the compiled graph and the fp64 reference computed it bit for bit alike in two runs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/expected.h"
#include "common/json_view.h"

namespace minifyd::protocol {

// A value's distance from its fp64 reference: {"max_abs_error", "rmse"}.
struct ErrorFigures {
  double max_abs_error = 0;
  double rmse = 0;
};
nlohmann::json encode(const ErrorFigures& figures);
Expected<void> decode(const JsonView& view, ErrorFigures& figures);

struct ValueMeasurement {
  std::string node;
  // Of the node's tensor (its worst one, when it returns several); empty when it returns none.
  std::string dtype;
  std::vector<std::int64_t> shape;
  bool measured = false;  // false: `note` says why not (not a tensor, a shape that differs)
  // The seeds' same(eager, compiled, fp64) fails: not allclose to eager, and the compiled value's
  // RMSE against fp64 beyond a multiple of eager's (exact equality for non-floating values).
  bool diverges = false;
  double max_abs_error = 0;              // compiled vs eager
  std::optional<ErrorFigures> compiled;  // vs fp64; unset when the fp64 reference failed
  std::optional<ErrorFigures> eager;     // vs fp64
  bool compiled_deterministic = true;    // two runs of the compiled graph, bit for bit
  bool fp64_deterministic = true;        // two runs of the fp64 reference, bit for bit
  std::string note;
};
nlohmann::json encode(const ValueMeasurement& measurement);
Expected<void> decode(const JsonView& view, ValueMeasurement& measurement);

}  // namespace minifyd::protocol
