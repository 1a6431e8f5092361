// The range of a stored storage's values, so that a random fill replacing them draws from where they
// were (indices stay valid indices, signs stay signs).
#pragma once

#include <optional>
#include <string_view>
#include <utility>

#include "common/dtype.h"

namespace minifyd::shrink {

// The smallest and the largest finite element of `bytes` read as `dtype` (integers and bools as
// their value); nullopt when no element is finite, `bytes` holds none, or the dtype is complex.
std::optional<std::pair<double, double>> finite_range(std::string_view bytes, DType dtype);

}  // namespace minifyd::shrink
