// The few places where LibTorch 1.13 and 2.x differ, behind one header, so the rest of worker/
// uses only APIs stable across both.
#pragma once

#include <optional>

#include <ATen/ATen.h>

#include "common/dtype.h"

namespace minifyd::worker {

inline at::ScalarType to_scalar_type(DType dtype) {
  switch (dtype) {
    case DType::bool_: return at::kBool;
    case DType::uint8: return at::kByte;
    case DType::int8: return at::kChar;
    case DType::int16: return at::kShort;
    case DType::int32: return at::kInt;
    case DType::int64: return at::kLong;
    case DType::float16: return at::kHalf;
    case DType::bfloat16: return at::kBFloat16;
    case DType::float32: return at::kFloat;
    case DType::float64: return at::kDouble;
    case DType::complex32: return at::kComplexHalf;
    case DType::complex64: return at::kComplexFloat;
    case DType::complex128: return at::kComplexDouble;
  }
  return at::kFloat;
}

// The inverse of to_scalar_type; nullopt for types the graph format has no name for (quantized).
inline std::optional<DType> to_dtype(at::ScalarType type) {
  for (DType dtype : {DType::bool_, DType::uint8, DType::int8, DType::int16, DType::int32, DType::int64,
                      DType::float16, DType::bfloat16, DType::float32, DType::float64, DType::complex32,
                      DType::complex64, DType::complex128})
    if (to_scalar_type(dtype) == type) return dtype;
  return std::nullopt;
}

// c10::optional is its own type in 1.13 and an alias of std::optional in 2.x (where newer releases
// may deprecate the name), so this takes either without naming it.
template <class Optional>
auto to_std_optional(const Optional& value) -> std::optional<std::decay_t<decltype(*value)>> {
  if (!value) return std::nullopt;
  return *value;
}

}  // namespace minifyd::worker
