// The nan check of PyTorch's minifier tests (functorch's test_has_add_mul pass_checker): a
// compiled graph fails when its output holds NaN or Inf while none of its inputs does, so that
// the search keeps only candidates where the computation itself makes the non-finite values.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <ATen/core/ivalue.h>

namespace minifyd::worker {

// Whether some floating or complex tensor among `values` holds NaN or Inf.
bool holds_non_finite(const std::vector<c10::IValue>& values);

// The first floating or complex leaf of `output` (nested like the graph's output) that holds NaN
// or Inf, described as "output[0] holds NaN (3 of 3 elements)"; nullopt when every leaf is finite.
std::optional<std::string> non_finite_output(const c10::IValue& output);

}  // namespace minifyd::worker
