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

double rmse(const at::Tensor& reference, const at::Tensor& value) {
  if (reference.numel() == 0) return 0;
  return (as_real_double(reference) - as_real_double(value)).pow(2).mean().sqrt().item<double>();
}

std::string shape_text(const at::Tensor& tensor) {
  std::ostringstream out;
  out << tensor.sizes();
  return out.str();
}

}  // namespace

AccuracyCheck compare_outputs(const c10::IValue& eager, const c10::IValue& compiled,
                              const std::optional<c10::IValue>& fp64, const AccuracyOptions& options) {
  std::vector<c10::IValue> refs = flatten_output(eager);
  std::vector<c10::IValue> results = flatten_output(compiled);
  std::vector<c10::IValue> fp64s = fp64 ? flatten_output(*fp64) : std::vector<c10::IValue>();
  AccuracyCheck check;
  auto fail = [&](const std::string& detail) {
    if (check.passes) check.detail = detail;
    check.passes = false;
  };
  if (refs.size() != results.size()) {
    fail("the compiled graph returns " + std::to_string(results.size()) + " values, eager " + std::to_string(refs.size()));
    return check;
  }
  double worst = -1;
  bool reported_failure = false;
  for (std::size_t i = 0; i < refs.size(); ++i) {
    const std::string where = "output " + std::to_string(i);
    const c10::IValue& ref = refs[i];
    const c10::IValue& res = results[i];
    if (!ref.isTensor() || !res.isTensor()) {
      if (ref.isTensor() != res.isTensor() || !(ref == res))
        fail(where + ": " + ref.tagKind() + " vs " + res.tagKind() + " differ");
      continue;
    }
    const at::Tensor& r = ref.toTensor();
    const at::Tensor& c = res.toTensor();
    if (r.sizes() != c.sizes()) {
      fail(where + ": shape " + shape_text(c) + " differs from eager's " + shape_text(r));
      continue;
    }
    bool floating = r.is_floating_point() || r.is_complex();
    if (!floating) {
      if (options.ignore_non_floating) continue;
      if (!at::equal(r, c.to(r.scalar_type()).to(r.device())))
        fail(where + ": " + std::string(c10::toString(r.scalar_type())) + " values differ from eager's");
      continue;
    }
    at::Tensor r64 = as_real_double(r);
    at::Tensor c64 = as_real_double(c.to(r.device()));
    at::Tensor difference = (c64 - r64).abs();
    protocol::AccuracyReport report;
    if (difference.numel() > 0) {
      at::Tensor finite = difference.nan_to_num(0, 0, 0);
      report.max_abs_error = finite.max().item<double>();
      report.max_rel_error = (finite / (r64.abs().nan_to_num(0, 0, 0) + 1e-12)).max().item<double>();
    }
    bool close = at::allclose(r64, c64, options.tolerance, options.tolerance, /*equal_nan=*/true);
    bool passes = close;
    if (i < fp64s.size() && fp64s[i].isTensor()) {
      const at::Tensor& reference = fp64s[i].toTensor();
      report.rmse_eager = rmse(reference, r);
      report.rmse_compiled = rmse(reference, c.to(r.device()));
      if (!close) {
        double multiplier = (c.scalar_type() == at::kHalf || c.scalar_type() == at::kBFloat16) ? 3.0 : 2.0;
        // Eager itself cannot compute this stably in its precision: nothing to hold the compiled graph to.
        passes = std::isnan(report.rmse_eager) ||
                 report.rmse_compiled <= multiplier * report.rmse_eager + options.tolerance / 10.0;
      }
    }
    if (!passes) {
      std::ostringstream detail;
      detail << where << ": compiled differs from eager (max abs error " << report.max_abs_error
             << ", rmse vs fp64 " << report.rmse_compiled << " compiled, " << report.rmse_eager << " eager)";
      fail(detail.str());
    }
    // Report the first failing output's figures, or else those of the largest error seen.
    if (!reported_failure && (!passes || report.max_abs_error > worst)) {
      check.report = report;
      worst = report.max_abs_error;
      reported_failure = !passes;
    }
  }
  return check;
}

}  // namespace minifyd::worker
