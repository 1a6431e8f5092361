// Turns what a worker did with an evaluate request into a verdict: a reply carries one; a crash
// or a timeout is one; a worker that could not answer at all (broken protocol, failed start,
// cancelled, error reply) is an error, since it says nothing about the candidate.
#pragma once

#include "common/expected.h"
#include "daemon/pool/worker_process.h"
#include "protocol/verdict.h"

namespace minifyd::verdict {

Expected<protocol::Verdict> verdict_of(const pool::WorkerOutcome& outcome);

}  // namespace minifyd::verdict
