// Tensor element types as the graph format names them (torch names without "torch.").
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace minifyd {

enum class DType {
  bool_, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64,
  complex32, complex64, complex128,
};

const char* to_string(DType dtype);
std::optional<DType> parse_dtype(std::string_view name);
std::size_t itemsize(DType dtype);
bool is_floating(DType dtype);
bool is_complex(DType dtype);
// All names, space-separated, for error messages that list what is accepted.
std::string dtype_names();

}  // namespace minifyd
