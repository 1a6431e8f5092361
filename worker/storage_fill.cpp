// Every value comes from one CPU generator seeded by the fill, in one call, so it does not depend
// on the device the storage goes to or on how many threads the worker has.
#include "worker/storage_fill.h"

#include <ATen/CPUGeneratorImpl.h>

#include "worker/torch_compat.h"

namespace minifyd::worker {
namespace {

at::Tensor filled_elements(const StorageFill& fill, std::int64_t count) {
  at::ScalarType type = to_scalar_type(fill.dtype);
  switch (fill.kind) {
    case FillKind::zeros: return at::zeros({count}, at::TensorOptions(type));
    case FillKind::ones: return at::ones({count}, at::TensorOptions(type));
    case FillKind::random: break;
  }
  at::Generator generator = at::detail::createCPUGenerator(fill.seed);
  if (is_floating(fill.dtype))
    return at::rand({count}, generator, at::TensorOptions(at::kDouble)).mul_(fill.high - fill.low).add_(fill.low).to(type);
  auto low = static_cast<std::int64_t>(fill.low);
  auto high = static_cast<std::int64_t>(fill.high);
  return at::randint(low, high + 1, {count}, generator, at::TensorOptions(at::kLong)).to(type);
}

}  // namespace

at::Tensor filled_storage_bytes(const StorageFill& fill, std::uint64_t nbytes) {
  auto count = static_cast<std::int64_t>(nbytes / itemsize(fill.dtype));
  at::Tensor elements = filled_elements(fill, count);
  at::Tensor bytes = at::empty({0}, at::TensorOptions(at::kByte));
  bytes.set_(elements.storage(), 0, {static_cast<std::int64_t>(nbytes)}, {1});
  return bytes;
}

}  // namespace minifyd::worker
