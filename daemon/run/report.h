// report.md: what a run did, for a person (BRIEF "The search": an honest summary at the end).
#pragma once

#include <cstddef>
#include <string>

#include "daemon/run/minification.h"

namespace minifyd::run {

std::string render_report(const Checkpoint& checkpoint, const RunResult& result, std::size_t workers);

}  // namespace minifyd::run
