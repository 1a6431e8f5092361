// What a process can observe of its own sandbox: environment variable names (never values),
// open descriptors, process group, working directory and CUDA_VISIBLE_DEVICES. Workers put it in
// their hello so logs and tests can see the sandbox from the inside.
#pragma once

#include <nlohmann/json.hpp>

namespace minifyd {

nlohmann::json describe_own_sandbox();

}  // namespace minifyd
