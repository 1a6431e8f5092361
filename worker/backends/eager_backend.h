// The `eager` backend: the eager interpreter itself, so a query can ask "does eager fail?".
#pragma once

#include <memory>

#include "worker/backend.h"

namespace minifyd::worker {

std::unique_ptr<Backend> make_eager_backend();

}  // namespace minifyd::worker
