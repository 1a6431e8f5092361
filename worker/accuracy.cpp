// Output comparison, leaf by leaf, as torch._dynamo.utils.same does it.
#include "worker/accuracy.h"

#include <ATen/ATen.h>

#include <cmath>
#include <sstream>
#include <vector>

#include "worker/graph_values.h"

namespace minifyd::worker {
namespace {

// Complex tensors are compared as their real and imaginary parts.
at::Tensor as_real_double(const at::Tensor& tensor) {
  at::Tensor real = tensor.is_complex() ? at::view_as_real(tensor.resolve_conj()) : tensor;
  return real.detach().to(at::kDouble);
}


std::string shape_text(const at::Tensor& tensor) {
  std::ostringstream out;
  out << tensor.sizes();
  return out.str();
}

// A floating tensor's distance from its fp64 reference: max abs error and RMSE.
protocol::ErrorFigures error_against(const at::Tensor& reference, const at::Tensor& value) {
  protocol::ErrorFigures figures;
  if (reference.numel() == 0) return figures;
  at::Tensor difference = as_real_double(value.to(reference.device())) - as_real_double(reference);
  figures.max_abs_error = difference.abs().nan_to_num(0, 0, 0).max().item<double>();
  figures.rmse = difference.pow(2).mean().sqrt().item<double>();
  return figures;
}

}  // namespace

LeafComparison compare_leaf(const c10::IValue& ref, const c10::IValue& res, const c10::IValue* fp64,
                            const AccuracyOptions& options) {
  LeafComparison leaf;
  auto fail = [&](std::string detail) {
    leaf.passes = false;
    leaf.detail = std::move(detail);
    return leaf;
  };
  if (!ref.isTensor() || !res.isTensor()) {
    if (ref.isTensor() != res.isTensor() || !(ref == res)) return fail(ref.tagKind() + " vs " + res.tagKind() + " differ");
    return leaf;
  }
  const at::Tensor& r = ref.toTensor();
  const at::Tensor& c = res.toTensor();
  if (r.sizes() != c.sizes()) return fail("shape " + shape_text(c) + " differs from eager's " + shape_text(r));
  leaf.floating = r.is_floating_point() || r.is_complex();
  if (!leaf.floating) {
    if (options.ignore_non_floating) return leaf;
    if (!at::equal(r, c.to(r.scalar_type()).to(r.device())))
      return fail(std::string(c10::toString(r.scalar_type())) + " values differ from eager's");
    return leaf;
  }
  at::Tensor r64 = as_real_double(r);
  at::Tensor c64 = as_real_double(c.to(r.device()));
  at::Tensor difference = (c64 - r64).abs();
  protocol::AccuracyReport& report = leaf.report;
  if (difference.numel() > 0) {
    at::Tensor finite = difference.nan_to_num(0, 0, 0);
    report.max_abs_error = finite.max().item<double>();
    report.max_rel_error = (finite / (r64.abs().nan_to_num(0, 0, 0) + 1e-12)).max().item<double>();
  }
  bool close = at::allclose(r64, c64, options.tolerance, options.tolerance, /*equal_nan=*/true);
  leaf.passes = close;
  if (fp64 != nullptr && fp64->isTensor()) {
    const at::Tensor& reference = fp64->toTensor();
    leaf.compiled_vs_fp64 = error_against(reference, c);
    leaf.eager_vs_fp64 = error_against(reference, r);
    report.rmse_compiled = leaf.compiled_vs_fp64->rmse;
    report.rmse_eager = leaf.eager_vs_fp64->rmse;
    if (!close) {
      double multiplier = (c.scalar_type() == at::kHalf || c.scalar_type() == at::kBFloat16) ? 3.0 : 2.0;
      // Eager itself cannot compute this stably in its precision: nothing to hold the compiled graph to.
      leaf.passes = std::isnan(report.rmse_eager) ||
                    report.rmse_compiled <= multiplier * report.rmse_eager + options.tolerance / 10.0;
    }
  }
  if (!leaf.passes) {
    std::ostringstream detail;
    detail << "compiled differs from eager (max abs error " << report.max_abs_error << ", rmse vs fp64 "
           << report.rmse_compiled << " compiled, " << report.rmse_eager << " eager)";
    leaf.detail = detail.str();
  }
  return leaf;
}

AccuracyCheck compare_outputs(const c10::IValue& eager, const c10::IValue& compiled,
                              const std::optional<c10::IValue>& fp64, const AccuracyOptions& options) {
  std::vector<c10::IValue> refs = flatten_output(eager);
  std::vector<c10::IValue> results = flatten_output(compiled);
  std::vector<c10::IValue> fp64s = fp64 ? flatten_output(*fp64) : std::vector<c10::IValue>();
  AccuracyCheck check;
  if (refs.size() != results.size()) {
    check.passes = false;
    check.detail = "the compiled graph returns " + std::to_string(results.size()) + " values, eager " +
                   std::to_string(refs.size());
    return check;
  }
  double worst = -1;
  bool reported_failure = false;
  for (std::size_t i = 0; i < refs.size(); ++i) {
    LeafComparison leaf = compare_leaf(refs[i], results[i], i < fp64s.size() ? &fp64s[i] : nullptr, options);
    if (!leaf.passes && check.passes) check.detail = "output " + std::to_string(i) + ": " + leaf.detail;
    check.passes = check.passes && leaf.passes;
    // Report the first failing output's figures, or else those of the largest error seen.
    if (leaf.floating && !reported_failure && (!leaf.passes || leaf.report.max_abs_error > worst)) {
      check.report = leaf.report;
      worst = leaf.report.max_abs_error;
      reported_failure = !leaf.passes;
    }
  }
  return check;
}

}  // namespace minifyd::worker
