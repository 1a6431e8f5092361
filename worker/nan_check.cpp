// Finding NaN and Inf in inputs and output leaves.
#include "worker/nan_check.h"

#include "worker/graph_values.h"

namespace minifyd::worker {
namespace {

// Integer and bool tensors cannot hold NaN or Inf.
bool can_be_non_finite(const at::Tensor& tensor) { return tensor.is_floating_point() || tensor.is_complex(); }

std::int64_t count_non_finite(const at::Tensor& tensor) {
  return tensor.numel() - at::isfinite(tensor.detach()).sum().item<std::int64_t>();
}

}  // namespace

bool holds_non_finite(const std::vector<c10::IValue>& values) {
  for (const c10::IValue& value : values)
    if (value.isTensor() && can_be_non_finite(value.toTensor()) && count_non_finite(value.toTensor()) > 0) return true;
  return false;
}

std::optional<std::string> non_finite_output(const c10::IValue& output) {
  std::vector<c10::IValue> leaves = flatten_output(output);
  for (std::size_t i = 0; i < leaves.size(); ++i) {
    if (!leaves[i].isTensor()) continue;
    const at::Tensor& tensor = leaves[i].toTensor();
    if (!can_be_non_finite(tensor)) continue;
    std::int64_t non_finite = count_non_finite(tensor);
    if (non_finite == 0) continue;
    std::int64_t nans = at::isnan(tensor.detach()).sum().item<std::int64_t>();
    const char* what = nans == 0 ? "Inf" : nans == non_finite ? "NaN" : "NaN and Inf";
    return "output[" + std::to_string(i) + "] holds " + what + " (" + std::to_string(non_finite) + " of " +
           std::to_string(tensor.numel()) + " elements)";
  }
  return std::nullopt;
}

}  // namespace minifyd::worker
