// The propagation phase.
#include "daemon/run/phases/propagation_phase.h"

#include <algorithm>
#include <chrono>

namespace minifyd::run {
namespace {

// The propagation runs the run's state eagerly and stores every intermediate, work no candidate does,
// beside the plain check's fresh python: its time limit is the candidates' (--timeout), but at least this.
constexpr std::chrono::milliseconds propagation_floor{60000};

}  // namespace

bool propagation_asked(const PhaseContext& context) { return context.checkpoint.state.eager == nullptr; }

Expected<void> start_propagation(PhaseContext& context) {
  const verdict::EvaluationSpec& evaluation = context.checkpoint.spec.evaluation;
  const RunPlace& place = context.place;
  context.propagation.emplace(context.pool, place.store, *place.vouched, place.intermediates_root(),
                              std::max(evaluation.timeout, propagation_floor), evaluation.op_libraries,
                              [&evaluator = context.evaluator] { evaluator.wake(); });
  context.checkpoint.state.eager = context.propagation->values();
  return {};
}

bool propagation_started(const PhaseContext& context) { return context.propagation.has_value(); }

Expected<void> finish_propagation(PhaseContext& context) {
  const auto& searched = *context.searched;
  if (searched && searched->stop == search::StopReason::interrupted) {
    context.propagation.reset();
    return {};
  }
  if (auto answered = context.propagation->finish(); !answered)
    return answered.error().with_context("propagating the original's intermediates");
  return {};
}

}  // namespace minifyd::run
