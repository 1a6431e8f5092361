// A pool of the fake worker (support/fake_worker.cpp) playing pass.transcript: every request passes
// unless its backend option "fake" scripts another answer. For the targets that define
// MINIFYD_FAKE_WORKER and MINIFYD_TRANSCRIPTS.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

#include "daemon/pool/worker_pool.h"

namespace minifyd::test {

inline pool::PoolConfig fake_pool(std::size_t slots, bool warm_spares = true) {
  pool::PoolConfig config;
  config.worker.executable = MINIFYD_FAKE_WORKER;
  config.worker.arguments = {std::string(MINIFYD_TRANSCRIPTS) + "/pass.transcript"};
  config.worker.kill_grace = std::chrono::milliseconds(200);
  config.slots.assign(slots, pool::PoolSlot{});
  config.warm_spares = warm_spares;
  return config;
}

// An evaluate request the fake worker answers by playing `script` (";"-separated lines).
inline protocol::WorkerRequest scripted(const std::string& script) {
  protocol::EvaluateRequest request;
  request.graph = nlohmann::json::object();
  request.backend = "eager";
  if (!script.empty()) request.backend_options["fake"] = script;
  return request;
}

inline bool passed(const pool::WorkerOutcome& outcome) {
  auto* reply = std::get_if<protocol::WorkerReply>(&outcome);
  return reply && std::get<protocol::EvaluateReply>(*reply).verdict.pass;
}

}  // namespace minifyd::test
