// Which backends a bisect can probe: the torch.compile ones, whose compiler has stages and
// subsystems (the Python worker's); a C++ worker's backend has neither.
#pragma once

#include <string>

#include "common/expected.h"

namespace minifyd::bisect {

// An error naming the backend when it is not a torch.compile backend.
Expected<void> bisectable_backend(const std::string& backend);

}  // namespace minifyd::bisect
