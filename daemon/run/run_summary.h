// A run's summary as the protocol reports it: what `minify run --json` prints and what the daemon
// answers for a done job.
#pragma once

#include <string>

#include "daemon/run/minification.h"
#include "protocol/run_totals.h"

namespace minifyd::run {

protocol::RunSummary summary_of(const RunResult& result);

// Why a run that minimized nothing (search::nothing_to_minimize) did not: the original passes, or it
// fails in the worker but not under plain PyTorch (run/plain_check.h); one line for the user.
std::string why_nothing_minimized(const RunResult& result);

}  // namespace minifyd::run
