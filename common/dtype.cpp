// The dtype table: one row per dtype, everything else derives from it.
#include "common/dtype.h"

namespace minifyd {
namespace {

struct DTypeInfo {
  DType dtype;
  const char* name;
  std::size_t itemsize;
  bool floating;
  bool complex;
};

constexpr DTypeInfo table[] = {
    {DType::bool_, "bool", 1, false, false},         {DType::uint8, "uint8", 1, false, false},
    {DType::int8, "int8", 1, false, false},          {DType::int16, "int16", 2, false, false},
    {DType::int32, "int32", 4, false, false},        {DType::int64, "int64", 8, false, false},
    {DType::float16, "float16", 2, true, false},     {DType::bfloat16, "bfloat16", 2, true, false},
    {DType::float32, "float32", 4, true, false},     {DType::float64, "float64", 8, true, false},
    {DType::complex32, "complex32", 4, false, true}, {DType::complex64, "complex64", 8, false, true},
    {DType::complex128, "complex128", 16, false, true},
};

const DTypeInfo& info(DType dtype) { return table[static_cast<int>(dtype)]; }

}  // namespace

const char* to_string(DType dtype) { return info(dtype).name; }
std::size_t itemsize(DType dtype) { return info(dtype).itemsize; }
bool is_floating(DType dtype) { return info(dtype).floating; }
bool is_complex(DType dtype) { return info(dtype).complex; }

std::optional<DType> parse_dtype(std::string_view name) {
  for (const auto& row : table)
    if (name == row.name) return row.dtype;
  return std::nullopt;
}

std::string dtype_names() {
  std::string names;
  for (const auto& row : table) {
    if (!names.empty()) names += ' ';
    names += row.name;
  }
  return names;
}

}  // namespace minifyd
