// minifyd_test: a vendor's operator library as the tests load it (--op-library minifyd_test=PATH.so;
// docs/security.md "A vendor's operators"), built against this build's LibTorch by CMake and against the
// PyTorch 2.x of the tests' python by tests/security/test_op_library.py. One operator,
// crash_on_shape(Tensor x) -> Tensor, x * 2 + 1, whose CPU kernel writes through a null pointer when x's
// first size is 7; its Meta kernel gives the output's shape to torch.compile's tracing.
#include <ATen/ATen.h>
#include <torch/library.h>

namespace {

constexpr std::int64_t crash_size = 7;

void write_through_null() {
  volatile int* nowhere = nullptr;
  *nowhere = 1;
}

at::Tensor crash_on_shape_cpu(const at::Tensor& x) {
  if (x.dim() > 0 && x.size(0) == crash_size) write_through_null();
  return x * 2 + 1;
}

at::Tensor crash_on_shape_meta(const at::Tensor& x) { return at::empty_like(x); }

}  // namespace

TORCH_LIBRARY(minifyd_test, m) { m.def("crash_on_shape(Tensor x) -> Tensor"); }

TORCH_LIBRARY_IMPL(minifyd_test, CPU, m) { m.impl("crash_on_shape", crash_on_shape_cpu); }

TORCH_LIBRARY_IMPL(minifyd_test, Meta, m) { m.impl("crash_on_shape", crash_on_shape_meta); }
