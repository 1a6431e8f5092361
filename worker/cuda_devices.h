// The GPUs this process sees (CUDA_VISIBLE_DEVICES applied), with their names and UUIDs, read from
// the CUDA driver API loaded at run time (libcuda.so.1). The worker needs no CUDA headers to build,
// and on a machine without a driver the list is simply empty.
#pragma once

#include <vector>

#include "protocol/worker_messages.h"

namespace minifyd::worker {

std::vector<protocol::DeviceInfo> visible_cuda_devices();

}  // namespace minifyd::worker
