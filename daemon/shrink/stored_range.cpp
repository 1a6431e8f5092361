// Elements decoded from little-endian bytes, as the store keeps them (the machines we serve are
// little-endian, as PyTorch's storages are).
#include "daemon/shrink/stored_range.h"

#include <cmath>
#include <cstdint>
#include <cstring>

namespace minifyd::shrink {
namespace {

template <class T>
T load(const char* at) {
  T value;
  std::memcpy(&value, at, sizeof(T));
  return value;
}

float from_bits(std::uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

// IEEE half precision: 1 sign, 5 exponent, 10 mantissa bits.
double half_to_double(std::uint16_t bits) {
  int exponent = (bits >> 10) & 0x1f;
  int mantissa = bits & 0x3ff;
  double sign = (bits & 0x8000) ? -1.0 : 1.0;
  if (exponent == 0x1f) return mantissa ? NAN : sign * INFINITY;
  if (exponent == 0) return sign * std::ldexp(mantissa, -24);
  return sign * std::ldexp(mantissa + 1024, exponent - 25);
}

double element(const char* at, DType dtype) {
  switch (dtype) {
    case DType::bool_: return load<std::uint8_t>(at) != 0;
    case DType::uint8: return load<std::uint8_t>(at);
    case DType::int8: return load<std::int8_t>(at);
    case DType::int16: return load<std::int16_t>(at);
    case DType::int32: return load<std::int32_t>(at);
    case DType::int64: return static_cast<double>(load<std::int64_t>(at));
    case DType::float16: return half_to_double(load<std::uint16_t>(at));
    case DType::bfloat16: return from_bits(static_cast<std::uint32_t>(load<std::uint16_t>(at)) << 16);
    case DType::float32: return load<float>(at);
    case DType::float64: return load<double>(at);
    default: return NAN;
  }
}

}  // namespace

std::optional<std::pair<double, double>> finite_range(std::string_view bytes, DType dtype) {
  if (is_complex(dtype)) return std::nullopt;
  std::size_t size = itemsize(dtype);
  std::optional<std::pair<double, double>> range;
  for (std::size_t at = 0; at + size <= bytes.size(); at += size) {
    double value = element(bytes.data() + at, dtype);
    if (!std::isfinite(value)) continue;
    if (!range) range.emplace(value, value);
    range->first = std::min(range->first, value);
    range->second = std::max(range->second, value);
  }
  return range;
}

}  // namespace minifyd::shrink
