// The accuracy predicate of the seeds' same_two_models (torch._dynamo.utils.same): compiled
// outputs pass if allclose to eager, or else if their RMSE against an fp64 reference is within a
// multiple of eager's own RMSE against it (so eager's own imprecision is tolerated).
#pragma once

#include <optional>
#include <string>

#include <ATen/core/ivalue.h>

#include "protocol/value_measurement.h"
#include "protocol/verdict.h"

namespace minifyd::worker {

struct AccuracyOptions {
  double tolerance = 1e-3;  // atol and rtol of allclose, as the seeds' repro_tolerance
  // `accuracy` ignores non-floating outputs (bools, ints): a float error quantised into a flipped
  // bool is not what that mode minimises. `strict-accuracy` compares them exactly.
  bool ignore_non_floating = false;
};

// same() on one leaf of an output (a tensor, or a plain value compared exactly).
struct LeafComparison {
  bool passes = true;
  bool floating = false;            // a floating (or complex) tensor: `report` holds its figures
  protocol::AccuracyReport report;  // compiled vs eager; each against fp64 when given
  // A floating leaf's compiled and eager values against the fp64 leaf, when one is given.
  std::optional<protocol::ErrorFigures> compiled_vs_fp64;
  std::optional<protocol::ErrorFigures> eager_vs_fp64;
  std::string detail;  // how it fails
};

// fp64: eager's leaf computed in float64, or null where there is none.
LeafComparison compare_leaf(const c10::IValue& eager, const c10::IValue& compiled, const c10::IValue* fp64,
                            const AccuracyOptions& options);

struct AccuracyCheck {
  bool passes = true;
  protocol::AccuracyReport report;  // figures of the worst floating output
  std::string detail;               // which output failed and how
};

// eager and compiled are nested like the graph's output; fp64, when present, is eager run in float64.
AccuracyCheck compare_outputs(const c10::IValue& eager, const c10::IValue& compiled,
                              const std::optional<c10::IValue>& fp64, const AccuracyOptions& options);

}  // namespace minifyd::worker
