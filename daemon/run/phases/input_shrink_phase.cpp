// The input shrinking phase, and the plain check a shrunk graph must pass.
#include "daemon/run/phases/input_shrink_phase.h"

#include <string>
#include <utility>

#include "common/log.h"
#include "daemon/pool/worker_program.h"
#include "daemon/run/plain_check.h"
#include "daemon/run/shape_proposer.h"
#include "daemon/shrink/input_shrink.h"

namespace minifyd::run {
namespace {

// How many times in a row a shrunk graph's repro must show a crash under plain PyTorch: memory a
// kernel corrupts may go unnoticed in a fresh process some of the time (seen with a heap overflow
// made 40 times smaller), so one crash is not enough to trust new values.
constexpr int plain_runs_of_a_crash = 3;

// Why the user's own process would not show the shrunk graph's failure ("" when it does, or when the
// run has no plain check): the original's plain check (run/plain_check.h) made on the shrunk graph.
std::string plain_refusal(const GraphDocument& shrunk, const Checkpoint& checkpoint, const RunPlace& place,
                          const Expected<std::string>& python, std::chrono::milliseconds timeout) {
  if (!has_plain_check(checkpoint.spec.evaluation) || !checkpoint.signature || !python) return "";
  int runs = checkpoint.signature->kind == protocol::FailureKind::crash ? plain_runs_of_a_crash : 1;
  for (int run = 0; run < runs; ++run) {
    PlainCheckInput input{*python, &shrunk, place.store.root(), &checkpoint.spec.evaluation,
                          timeout + plain_check_start_allowance};
    protocol::PlainCheck check = check_under_plain_pytorch(input, *checkpoint.signature);
    if (!plain_check_confirms(check))
      return "under plain PyTorch its repro.py " + check.outcome + " (" + check.detail + ")";
  }
  return "";
}

}  // namespace

bool input_shrink_asked(const PhaseContext& context) {
  return context.minimized && context.checkpoint.spec.shrink_inputs;
}

Expected<void> shrink_result_inputs(PhaseContext& context) {
  Checkpoint& checkpoint = context.checkpoint;
  const RunPlace& place = context.place;
  PoolEvaluator& evaluator = context.evaluator;
  // The sizes are proposed by a torch that traces symbolically: the run's python, or for a C++
  // backend's run (which has none) the one a torch.compile run would find.
  auto python = python_of(context.hooks);
  if (python && python->empty()) python = pool::find_python("");
  // A crash keeps its sizes: how far a faulty kernel writes past its memory follows them, and plain
  // PyTorch misses a smaller overflow some of the time (a heap overflow at a quarter of its sizes
  // passed 1 run in 10 beside other work, at its own sizes none in 12).
  bool keeps_sizes = checkpoint.signature && checkpoint.signature->kind == protocol::FailureKind::crash;
  shrink::ShapeProposer propose_shapes;
  if (python && !keeps_sizes) propose_shapes = shape_proposer(*python, place.store.root(), place.shrink_root());
  else if (!python) log::info("the input shrinking keeps the sizes: " + python.error().message);
  const GraphDocument& minimized = checkpoint.state.document;
  auto shrunk = shrink::shrink_inputs(minimized, place.store, evaluator, propose_shapes);
  if (shrunk && keeps_sizes)
    shrunk->record.shapes = "kept: a crash, whose kernel may corrupt less memory at smaller sizes than plain PyTorch "
                            "notices";
  std::string refused = shrunk ? plain_refusal(shrunk->document, checkpoint, place, python, evaluator.timeout()) : "";
  if (!refused.empty() && propose_shapes) {
    log::warn("the shrunk graph is not kept: " + refused + "; shrinking its values alone");
    auto values_only = shrink::shrink_inputs(minimized, place.store, evaluator, {});
    if (values_only) {
      values_only->record.shapes = "kept: at the smaller sizes " + refused;
      values_only->record.queries += shrunk->record.queries;
      shrunk = std::move(values_only);
      refused = plain_refusal(shrunk->document, checkpoint, place, python, evaluator.timeout());
    }
  }
  if (!shrunk || !refused.empty()) {
    std::string why = shrunk ? "the shrunk graph is not kept: " + refused : shrunk.error().message;
    log::warn("shrinking the inputs: " + why);
    shrink::InputShrink failed;
    failed.before = failed.after = shrink::data_size(minimized);
    failed.error = why;
    checkpoint.input_shrink = std::move(failed);
    return {};
  }
  log::info("inputs shrunk: " + shrink::bytes_text(shrunk->record.before.stored_bytes) + " stored -> " +
            shrink::bytes_text(shrunk->record.after.stored_bytes) + " (" + std::to_string(shrunk->record.queries) +
            " candidates)");
  checkpoint.state.document = std::move(shrunk->document);
  checkpoint.input_shrink = std::move(shrunk->record);
  return {};
}

void forget_input_shrink(Checkpoint& checkpoint) { checkpoint.input_shrink.reset(); }

}  // namespace minifyd::run
