// The search phase: its options from the run's spec and checkpoint, and the session that records each
// accepted reduction.
#include "daemon/run/phases/search_phase.h"

#include <algorithm>
#include <chrono>

#include "common/log.h"
#include "daemon/pool/worker_program.h"
#include "daemon/run/generated_code.h"
#include "daemon/search/strategy_registry.h"

namespace minifyd::run {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Records every accepted reduction in the checkpoint (and on disk) before the search goes on.
class Session final : public search::SearchObserver {
 public:
  explicit Session(PhaseContext& context) : context_(context), prior_(context.checkpoint.totals) {
    context_.checkpoint.totals.sessions = prior_.sessions + 1;
    context_.checkpoint.stop.clear();
  }

  void on_progress(const search::SearchProgress& progress) override {
    if (observer() != nullptr) observer()->on_progress(with_totals(progress));
  }

  void on_accepted(const search::SearchState& state, const search::SearchProgress& progress) override {
    search::SearchProgress total = with_totals(progress);
    Checkpoint& checkpoint = context_.checkpoint;
    checkpoint.state = search::clone_state(state);
    checkpoint.steps.push_back(AcceptedStep{std::string(progress.strategy), progress.granularity,
                                            shape_of(state), total.queries});
    update(total.queries, total.cache_hits);
    if (auto saved = context_.place.save_checkpoint(checkpoint); !saved)
      log::warn("could not save the checkpoint: " + saved.error().message);
    if (observer() != nullptr) observer()->on_accepted(state, total);
  }

  // Brings the totals, signature and cache up to date with this session's figures.
  void update(std::uint64_t queries, std::uint64_t cache_hits) {
    Checkpoint& checkpoint = context_.checkpoint;
    checkpoint.totals.queries = queries;
    checkpoint.totals.cache_hits = cache_hits;
    // Every crash, CUDA error and hang became a verdict, whether its worker died or only the
    // worker's child.
    const auto& failures = context_.evaluator.tally().failures_by_kind;
    auto count = [&](protocol::FailureKind kind) {
      auto it = failures.find(protocol::to_string(kind));
      return it == failures.end() ? 0 : it->second;
    };
    checkpoint.totals.crashes_contained =
        prior_.crashes_contained + count(protocol::FailureKind::crash) + count(protocol::FailureKind::cuda_error);
    checkpoint.totals.timeouts = prior_.timeouts + count(protocol::FailureKind::timeout);
    checkpoint.totals.wall_seconds = prior_.wall_seconds + seconds_since(context_.started);
    checkpoint.signature = context_.judge.expected();
    checkpoint.verdicts_key = context_.cache.evaluation_key();
    checkpoint.verdicts.clear();
    for (auto& [hash, fails] : context_.cache.known()) checkpoint.verdicts.push_back(CachedVerdict{std::move(hash), fails});
  }

 private:
  search::SearchObserver* observer() const { return context_.hooks.observer; }

  search::SearchProgress with_totals(search::SearchProgress progress) const {
    progress.start_nodes = context_.checkpoint.original.nodes;
    progress.queries += prior_.queries;
    progress.cache_hits += prior_.cache_hits;
    return progress;
  }

  PhaseContext& context_;
  RunTotals prior_;
};

std::optional<std::size_t> remaining(std::optional<std::size_t> limit, std::uint64_t used) {
  if (!limit) return std::nullopt;
  return used >= *limit ? 0 : *limit - static_cast<std::size_t>(used);
}

// The search's options: the spec's, what is left of its budgets, and where an earlier session or the
// original's analysis says to begin.
search::SearchOptions search_options(PhaseContext& context, const std::vector<const search::Strategy*>& strategies) {
  const Checkpoint& checkpoint = context.checkpoint;
  const RunSpec& spec = checkpoint.spec;
  search::SearchOptions options;
  options.max_granularity = spec.max_granularity;
  options.skip_sanity = !context.checks_original;
  options.strategies = strategies;
  if (spec.analyze_first && checkpoint.steps.empty() && checkpoint.analysis)
    options.first_try_end = checkpoint.analysis->first_divergence;
  options.bisect_prefix = spec.bisect_prefix && checkpoint.steps.empty();
  options.runner.budget.max_queries = remaining(spec.max_queries, checkpoint.totals.queries);
  if (spec.max_time_seconds) {
    double left = std::max(0.0, *spec.max_time_seconds - checkpoint.totals.wall_seconds);
    options.runner.budget.max_time = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(left));
  }
  options.runner.interrupt = context.hooks.interrupt;
  options.runner.operators = spec.evaluation.operators();
  options.runner.refuted = &context.confirmation.refuted();
  options.speculation.after = context.hooks.speculate_after;
  options.speculation.regardless_of_passes = pool::is_torch_compile_backend(spec.evaluation.backend);
  if (spec.failing_kernel_first && generates_code(spec.evaluation) && context.checks_original) {
    context.evaluator.locate_failing_kernel();
    options.failing_kernel_nodes = [&evaluator = context.evaluator] { return evaluator.failing_kernel_nodes(); };
  }
  return options;
}

}  // namespace

bool search_asked(const PhaseContext&) { return true; }

Expected<void> search_graph(PhaseContext& context) {
  auto strategies = search::select_strategies(context.checkpoint.spec.strategies);
  if (!strategies) return strategies.error();
  search::SearchOptions options = search_options(context, *strategies);
  Checkpoint& checkpoint = context.checkpoint;
  Session session(context);
  search::SteadyClock clock;
  std::uint64_t prior_queries = checkpoint.totals.queries;
  std::uint64_t prior_hits = checkpoint.totals.cache_hits;
  context.prior_steps = checkpoint.steps.size();
  context.before = search::clone_state(checkpoint.state);
  context.searched = search::minify(search::clone_state(checkpoint.state), context.evaluator, context.cache, clock,
                                    options, &session);
  if (*context.searched) {
    const search::SearchCounters& counters = (*context.searched)->counters;
    session.update(prior_queries + counters.queries, prior_hits + counters.cache_hits);
  }
  return {};
}

Expected<void> take_search_result(PhaseContext& context) {
  Expected<search::SearchResult>& searched = *context.searched;
  if (!searched) return searched.error();
  context.candidates.timeout = context.evaluator.timeout();
  // The plain check may still run (a compile error's search often ends first): the minimized graph's
  // questions are answered meanwhile, and undone if it refutes the original.
  if (context.confirmation.refuted()) return {};
  bool minimized = !search::nothing_to_minimize(searched->stop);
  Checkpoint& checkpoint = context.checkpoint;
  if (minimized) checkpoint.state = std::move(searched->best);
  checkpoint.finished = searched->stop != search::StopReason::error && searched->stop != search::StopReason::interrupted;
  context.minimized = checkpoint.finished && minimized;
  return {};
}

}  // namespace minifyd::run
