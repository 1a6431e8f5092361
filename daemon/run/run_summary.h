// A run's summary as the protocol reports it: what `minify run --json` prints and what the daemon
// answers for a done job.
#pragma once

#include "daemon/run/minification.h"
#include "protocol/run_totals.h"

namespace minifyd::run {

protocol::RunSummary summary_of(const RunResult& result);

}  // namespace minifyd::run
