// The plain check phase.
#include "daemon/run/phases/plain_check_phase.h"

#include "daemon/run/plain_check.h"

namespace minifyd::run {

void start_plain_check(PlainConfirmation& confirmation, const RunSpec& spec, const GraphDocument& original,
                       const RunPlace& place, const SessionHooks& hooks) {
  if (!has_plain_check(spec.evaluation) || !plain_check_skip_reason(spec).empty()) return;
  auto python = python_of(hooks);
  if (!python) return;  // said by the session, once the original fails
  // Under the candidates' time limit before the original's time sets it: the ceiling.
  confirmation.start(PlainCheckRequest{*python, search::clone_document(original), place.store.root(), spec.evaluation,
                                       spec.evaluation.timeout + plain_check_start_allowance},
                     hooks.timeline);
}

bool plain_check_asked(const PhaseContext& context) {
  return has_plain_check(context.checkpoint.spec.evaluation) && !context.checkpoint.plain_check;
}

Expected<void> arrange_plain_check(PhaseContext& context) {
  Checkpoint& checkpoint = context.checkpoint;
  if (std::string reason = plain_check_skip_reason(checkpoint.spec); !reason.empty()) {
    checkpoint.plain_check = plain_check_skipped(reason);
    return {};
  }
  if (!context.checks_original) return {};
  start_plain_check(context.confirmation, checkpoint.spec, checkpoint.state.document, context.place, context.hooks);
  context.evaluator.on_original_fails([&confirmation = context.confirmation, &judge = context.judge,
                                       python = python_of(context.hooks)] {
    if (!python) return confirmation.skip("no python: " + python.error().message);
    if (!judge.expected()) return confirmation.skip("the original's failure has no signature");
    confirmation.expect(*judge.expected());
  });
  return {};
}

bool plain_verdict_asked(const PhaseContext&) { return true; }

Expected<void> take_plain_verdict(PhaseContext& context) {
  Checkpoint& checkpoint = context.checkpoint;
  const SessionHooks& hooks = context.hooks;
  if (context.minimized && hooks.before_plain_verdict && context.confirmation.pending())
    hooks.before_plain_verdict(checkpoint);
  if (hooks.pool_done) hooks.pool_done();
  if (auto plain = context.confirmation.wait()) checkpoint.plain_check = std::move(*plain);
  if (!context.confirmation.refuted()) return {};
  // Nothing the search accepted meanwhile stands.
  (*context.searched)->stop = search::StopReason::unconfirmed;
  checkpoint.state = std::move(*context.before);
  checkpoint.steps.erase(checkpoint.steps.begin() + static_cast<std::ptrdiff_t>(context.prior_steps),
                         checkpoint.steps.end());
  checkpoint.finished = true;
  context.minimized = false;
  return {};
}

}  // namespace minifyd::run
