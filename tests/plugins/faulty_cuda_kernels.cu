// CUDA faults for the faulty plugin.
#include "tests/plugins/faulty_cuda_kernels.h"

// A release build defines NDEBUG, which would compile the device-side assert away.
#undef NDEBUG
#include <cassert>
#include <cstddef>

namespace faulty {
namespace {

__global__ void write_out_of_bounds(float* data) {
  // Far past the end of the tensor and of any allocation the caching allocator holds.
  data[std::size_t{1} << 40] = 1.0f;
}

__global__ void assert_false(int zero) { assert(zero != 0); }

}  // namespace

void launch_illegal_address(void* device_data) { write_out_of_bounds<<<1, 1>>>(static_cast<float*>(device_data)); }

void launch_device_assert() { assert_false<<<1, 1>>>(0); }

}  // namespace faulty
