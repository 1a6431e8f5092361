// What a finished run's store keeps: the result's blobs, rooted as PREFIX-result; where the place drops
// roots, the original's, the intermediates' and the shrinking's go, and the store is collected.
#pragma once

#include "daemon/run/run_phase.h"

namespace minifyd::run {

bool result_store_asked(const PhaseContext& context);
Expected<void> keep_only_result(PhaseContext& context);

}  // namespace minifyd::run
