// How the eager interpreter runs a graph (eager_interpreter.h), also read where values are lowered
// (graph_values.h).
#pragma once

#include <optional>

#include <c10/core/Device.h>

namespace minifyd::worker {

struct EagerOptions {
  // The device that "cuda" and "cuda:N" arguments mean (a worker sees only its own GPU, as cuda:0).
  // Unset: devices are used as written.
  std::optional<at::Device> cuda_device;
  // Every floating dtype argument becomes float64, as the seeds' cast_to_fp64 does to compute an
  // fp64 reference. The caller casts floating inputs and constants itself.
  bool fp64_reference = false;
};

}  // namespace minifyd::worker
