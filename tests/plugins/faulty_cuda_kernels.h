// The faulty plugin's real CUDA faults, compiled by nvcc where CUDA is found (MINIFYD_FAULTY_CUDA):
// kernels that break the GPU the way buggy generated kernels do. Each launches asynchronously on
// the current device and returns at once; the error surfaces when the worker synchronizes.
#pragma once

namespace faulty {

// A store far outside any allocation: "an illegal memory access was encountered".
void launch_illegal_address(void* device_data);
// A failing device-side assert: "device-side assert triggered".
void launch_device_assert();

}  // namespace faulty
