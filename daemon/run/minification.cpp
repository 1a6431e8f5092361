// The run: store preparation, propagation, the search session.
#include "daemon/run/minification.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>

#include "common/canonical_hash.h"
#include "common/graph_codec.h"
#include "common/log.h"
#include "daemon/analysis/analysis_requests.h"
#include "daemon/pool/worker_program.h"
#include "daemon/propagation/propagation.h"
#include "daemon/run/plain_check.h"
#include "daemon/run/plain_confirmation.h"
#include "daemon/run/run_phases.h"
#include "daemon/search/minifier.h"
#include "daemon/search/strategy_registry.h"
#include "daemon/shrink/input_shrink.h"

namespace minifyd::run {
namespace {

using Clock = std::chrono::steady_clock;

// The propagation runs the run's state eagerly and stores every intermediate, work no candidate does,
// beside the plain check's fresh python: its time limit is the candidates' (--timeout), but at least this.
constexpr std::chrono::milliseconds propagation_floor{60000};

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The original analyzed on the run's pool (both modes for --analyze, in place alone for
// --analyze-first), its files saved where the run's outputs go.
Expected<OriginalAnalysis> analyze_original(const RunSpec& spec, const GraphDocument& original, const RunPlace& place,
                                            const pool::PoolAccess& pool) {
  Clock::time_point started = Clock::now();
  analysis::AnalysisPlan plan{spec.evaluation, {analysis::Mode::in_place}};
  if (spec.analyze) plan.modes = {analysis::Mode::isolated, analysis::Mode::in_place};
  auto analyzed = analysis::run_analysis(original, place.store.root(), plan, pool);
  if (!analyzed) return analyzed.error().with_context("analyzing the original");
  analysis::Findings findings = analysis::findings_of(*analyzed);
  if (spec.analyze) {
    std::string title = "`" + std::filesystem::path(spec.graph_dir).filename().string() + "`";
    auto files = analysis::render_analysis_files(*analyzed, findings, title);
    if (!files) return files.error().with_context("writing the analysis");
    if (files->count(analysis::analysis_plot_name) == 0)
      log::warn(std::string("the analysis has no plot: ") + analysis::analysis_markdown_name + " says why");
    if (auto saved = place.save_analysis(*files); !saved) return saved.error().with_context("saving the analysis");
  }
  OriginalAnalysis found;
  found.first_divergence = findings.first_divergence;
  found.requests = analyzed->requests;
  found.seconds = seconds_since(started);
  log::info("analysis: " + (found.first_divergence ? "first divergence at '" + *found.first_divergence + "'"
                                                   : std::string("no divergence")) +
            " (" + std::to_string(found.requests) + " worker requests, " + std::to_string(found.seconds) + " s)");
  return found;
}

// Records every accepted reduction in the checkpoint (and on disk) before the search goes on.
class Session final : public search::SearchObserver {
 public:
  Session(Checkpoint& checkpoint, const RunPlace& place, search::SearchObserver* observer,
          const search::VerdictCache& cache, const PoolEvaluator& evaluator, const verdict::FailureJudge& judge,
          Clock::time_point started)
      : checkpoint_(checkpoint), place_(place), observer_(observer), cache_(cache), evaluator_(evaluator), judge_(judge),
        prior_(checkpoint.totals), started_(started) {
    checkpoint_.totals.sessions = prior_.sessions + 1;
    checkpoint_.stop.clear();
  }

  void on_progress(const search::SearchProgress& progress) override {
    if (observer_ != nullptr) observer_->on_progress(with_totals(progress));
  }

  void on_accepted(const search::SearchState& state, const search::SearchProgress& progress) override {
    search::SearchProgress total = with_totals(progress);
    checkpoint_.state = search::clone_state(state);
    checkpoint_.steps.push_back(AcceptedStep{std::string(progress.strategy), progress.granularity,
                                             shape_of(state), total.queries});
    update(total.queries, total.cache_hits);
    if (auto saved = place_.save_checkpoint(checkpoint_); !saved)
      log::warn("could not save the checkpoint: " + saved.error().message);
    if (observer_ != nullptr) observer_->on_accepted(state, total);
  }

  // Brings the totals, signature and cache up to date with this session's figures.
  void update(std::uint64_t queries, std::uint64_t cache_hits) {
    checkpoint_.totals.queries = queries;
    checkpoint_.totals.cache_hits = cache_hits;
    // Every crash, CUDA error and hang became a verdict, whether its worker died or only the
    // worker's child.
    const auto& failures = evaluator_.tally().failures_by_kind;
    auto count = [&](protocol::FailureKind kind) {
      auto it = failures.find(protocol::to_string(kind));
      return it == failures.end() ? 0 : it->second;
    };
    checkpoint_.totals.crashes_contained =
        prior_.crashes_contained + count(protocol::FailureKind::crash) + count(protocol::FailureKind::cuda_error);
    checkpoint_.totals.timeouts = prior_.timeouts + count(protocol::FailureKind::timeout);
    checkpoint_.totals.wall_seconds = prior_.wall_seconds + seconds_since(started_);
    checkpoint_.signature = judge_.expected();
    checkpoint_.verdicts_key = cache_.evaluation_key();
    checkpoint_.verdicts.clear();
    for (auto& [hash, fails] : cache_.known()) checkpoint_.verdicts.push_back(CachedVerdict{std::move(hash), fails});
  }

  search::SearchProgress with_totals(search::SearchProgress progress) const {
    progress.start_nodes = checkpoint_.original.nodes;
    progress.queries += prior_.queries;
    progress.cache_hits += prior_.cache_hits;
    return progress;
  }

 private:
  Checkpoint& checkpoint_;
  const RunPlace& place_;
  search::SearchObserver* observer_;
  const search::VerdictCache& cache_;
  const PoolEvaluator& evaluator_;
  const verdict::FailureJudge& judge_;
  RunTotals prior_;
  Clock::time_point started_;
};

// The plain check of the original (run/plain_check.h) for a session that checks the original (a resumed
// one does not): recorded in the checkpoint as skipped, or made beside the sanity check and the search
// (run/plain_confirmation.h): the repro runs from the session's start unless it was started before it,
// and is judged once the sanity check found the original failing.
void arrange_plain_check(PlainConfirmation& confirmation, Checkpoint& checkpoint, const RunPlace& place,
                         const SessionHooks& hooks, PoolEvaluator& evaluator, const verdict::FailureJudge& judge,
                         bool checks_original) {
  if (!has_plain_check(checkpoint.spec.evaluation) || checkpoint.plain_check) return;
  if (std::string reason = plain_check_skip_reason(checkpoint.spec); !reason.empty()) {
    checkpoint.plain_check = plain_check_skipped(reason);
    return;
  }
  if (!checks_original) return;
  start_plain_check(confirmation, checkpoint.spec, checkpoint.state.document, place, hooks);
  evaluator.on_original_fails([&confirmation, &judge, python = python_of(hooks)] {
    if (!python) return confirmation.skip("no python: " + python.error().message);
    if (!judge.expected()) return confirmation.skip("the original's failure has no signature");
    confirmation.expect(*judge.expected());
  });
}

std::optional<std::size_t> remaining(std::optional<std::size_t> limit, std::uint64_t used) {
  if (!limit) return std::nullopt;
  return used >= *limit ? 0 : *limit - static_cast<std::size_t>(used);
}

// After the search, the minimized graph's questions (run/run_phases.h) the run asks, in order, each
// request limited as its candidates were.
void answer_after_search(Checkpoint& checkpoint, const RunPlace& place, const pool::PoolAccess& pool, verdict::FailureJudge& judge,
                         PoolEvaluator& evaluator, const SessionHooks& hooks) {
  TimelinePhase after_search(hooks.timeline, "after_search");
  PhaseContext context{checkpoint, place, pool, judge, evaluator, hooks, checkpoint.spec.evaluation};
  context.candidates.timeout = evaluator.timeout();
  for (const RunPhase& phase : after_search_phases()) {
    if (!phase.asked(checkpoint.spec, context.candidates)) continue;
    log::debug("after the search: " + std::string(phase.name));
    phase.answer(context);
  }
}

// Roots the result's blobs and drops what only the search needed from the store (where the place
// drops roots): the result's blobs stay.
Expected<void> keep_only_result(const RunPlace& place, const GraphDocument& result) {
  const ContentStore& store = place.store;
  if (auto rooted = store.write_root(place.result_root(), result.blob_hashes()); !rooted) return rooted.error();
  if (!place.drops_roots) return {};
  for (const std::string& root : {place.original_root(), place.intermediates_root(), place.shrink_root()})
    if (auto removed = store.remove_root(root); !removed) return removed.error();
  auto collected = store.gc();
  if (!collected) return collected.error();
  return {};
}

}  // namespace

Expected<void> import_original(const GraphDocument& original, const ContentStore& source, const RunPlace& place) {
  const ContentStore& store = place.store;
  auto lock = store.lock_shared();
  if (!lock) return lock.error();
  BlobBatch blobs(store);
  std::vector<std::string> written;
  // Each blob by its storage's size: the source's file is refused, unread, unless it is a regular
  // file of that size.
  for (const StorageRef& storage : original.storages) {
    if (!storage.stored() || store.contains(storage.hash)) continue;
    if (auto put = blobs.put_from(source, storage.hash, storage.nbytes); !put) return put.error();
    written.push_back(storage.hash);
  }
  if (auto synced = blobs.sync(); !synced) return synced.error();
  for (const std::string& hash : written) {
    auto identity = store.identity(hash);
    if (!identity) return identity.error();
    (*place.vouched)[hash] = *identity;
  }
  return store.write_root(place.original_root(), original.blob_hashes());
}

Expected<Checkpoint> begin_run(RunSpec spec, GraphDocument original, const RunPlace& place, const pool::PoolAccess& pool) {
  Clock::time_point started = Clock::now();
  if (auto strategies = search::select_strategies(spec.strategies); !strategies) return strategies.error();
  Checkpoint checkpoint;
  checkpoint.spec = std::move(spec);
  checkpoint.original_hash = canonical_hash(original);
  checkpoint.state.document = std::move(original);
  checkpoint.original = shape_of(checkpoint.state);
  checkpoint.original_data = shrink::data_size(checkpoint.state.document);
  if (checkpoint.spec.analyze || checkpoint.spec.analyze_first) {
    // The values the analysis's workers write stay unrooted while it reads them: a gc of the
    // daemon's shared store (another job ending) waits until then.
    auto writing = place.store.lock_shared();
    if (!writing) return writing.error();
    auto analysis = analyze_original(checkpoint.spec, checkpoint.state.document, place, pool);
    if (!analysis) return analysis.error();
    checkpoint.analysis = std::move(*analysis);
  }
  // The setup counts in the run's wall time; the search sessions add theirs.
  checkpoint.totals.wall_seconds = seconds_since(started);
  if (auto saved = place.save_checkpoint(checkpoint); !saved) return saved.error();
  return checkpoint;
}

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

Expected<RunResult> continue_run(Checkpoint checkpoint, const RunPlace& place, const pool::PoolAccess& pool,
                                 const SessionHooks& hooks) {
  Clock::time_point started = Clock::now();
  const RunSpec& spec = checkpoint.spec;
  auto strategies = search::select_strategies(spec.strategies);
  if (!strategies) return strategies.error();
  auto check = verdict::failure_check_of(spec.evaluation);
  if (!check) return check.error();
  verdict::FailureJudge judge(std::move(*check), spec.match);
  if (checkpoint.signature) judge.expect(*checkpoint.signature);
  search::VerdictCache cache(evaluation_key(spec));
  if (checkpoint.verdicts_key == cache.evaluation_key())
    for (const CachedVerdict& verdict : checkpoint.verdicts) cache.store(verdict.hash, verdict.fails);

  search::SearchOptions options;
  options.max_granularity = spec.max_granularity;
  // A resumed run checked its original in an earlier session.
  options.skip_sanity = spec.skip_sanity || checkpoint.signature.has_value() || !checkpoint.steps.empty();
  options.strategies = *strategies;
  if (spec.analyze_first && checkpoint.steps.empty() && checkpoint.analysis)
    options.first_try_end = checkpoint.analysis->first_divergence;
  options.bisect_prefix = spec.bisect_prefix && checkpoint.steps.empty();
  options.runner.budget.max_queries = remaining(spec.max_queries, checkpoint.totals.queries);
  if (spec.max_time_seconds) {
    double left = std::max(0.0, *spec.max_time_seconds - checkpoint.totals.wall_seconds);
    options.runner.budget.max_time = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(left));
  }
  options.runner.interrupt = hooks.interrupt;
  options.runner.operators = spec.evaluation.operators();
  options.speculation.after = hooks.speculate_after;
  options.speculation.regardless_of_passes = pool::is_torch_compile_backend(spec.evaluation.backend);

  PoolEvaluator evaluator(pool, spec.evaluation, place.store.root(), judge, checkpoint.original_hash,
                          spec.timeout_follows_original, place.vouched);
  if (spec.failing_kernel_first && generates_code(spec.evaluation) && !options.skip_sanity) {
    evaluator.locate_failing_kernel();
    options.failing_kernel_nodes = [&evaluator] { return evaluator.failing_kernel_nodes(); };
  }
  // The state's eager values, unless an earlier session saved them, come while the search runs, as it
  // asks for them.
  std::optional<propagation::RunPropagations> propagation;
  if (checkpoint.state.eager == nullptr) {
    propagation.emplace(pool, place.store, *place.vouched, place.intermediates_root(),
                        std::max(spec.evaluation.timeout, propagation_floor), spec.evaluation.op_libraries,
                        [&evaluator] { evaluator.wake(); });
    checkpoint.state.eager = propagation->values();
  }
  PlainConfirmation own_confirmation;
  PlainConfirmation& confirmation = hooks.plain_check != nullptr ? *hooks.plain_check : own_confirmation;
  options.runner.refuted = &confirmation.refuted();
  arrange_plain_check(confirmation, checkpoint, place, hooks, evaluator, judge, !options.skip_sanity);
  Session session(checkpoint, place, hooks.observer, cache, evaluator, judge, started);
  search::SteadyClock clock;
  std::uint64_t prior_queries = checkpoint.totals.queries;
  std::uint64_t prior_hits = checkpoint.totals.cache_hits;
  std::size_t prior_steps = checkpoint.steps.size();
  search::SearchState before = search::clone_state(checkpoint.state);
  std::optional<TimelinePhase> searching(std::in_place, hooks.timeline, "search");
  auto searched = search::minify(search::clone_state(checkpoint.state), evaluator, cache, clock, options, &session);
  searching.reset();
  // A search that ended before the values it asked for came still waits for them: a run whose state
  // asked for does not run in eager fails with that, whatever the search found. An interrupted one
  // drops them (the requests are cancelled; its checkpoint then has none, and a resume propagates
  // again).
  if (searched && searched->stop == search::StopReason::interrupted) propagation.reset();
  if (propagation)
    if (auto answered = propagation->finish(); !answered) {
      confirmation.wait();
      return answered.error().with_context("propagating the original's intermediates");
    }
  if (!searched) {
    confirmation.wait();
    return searched.error();
  }

  RunResult result;
  result.tally = evaluator.tally();
  result.candidate_timeout = evaluator.timeout();
  result.session_queries = searched->counters.queries;
  result.session_lineages = searched->counters.lineages;
  result.session_speculative_queries = searched->counters.speculative_queries;
  session.update(prior_queries + searched->counters.queries, prior_hits + searched->counters.cache_hits);
  // The plain check may still run (a compile error's search often ends first): the minimized graph's
  // questions are answered meanwhile, and undone below if it refutes the original.
  bool minimized = !search::nothing_to_minimize(searched->stop);
  if (!confirmation.refuted()) {
    if (minimized) checkpoint.state = std::move(searched->best);
    checkpoint.finished = searched->stop != search::StopReason::error && searched->stop != search::StopReason::interrupted;
    if (checkpoint.finished && minimized) {
      answer_after_search(checkpoint, place, pool, judge, evaluator, hooks);
      if (hooks.before_plain_verdict && confirmation.pending()) hooks.before_plain_verdict(checkpoint);
    }
  }
  if (hooks.pool_done) hooks.pool_done();
  if (auto plain = confirmation.wait()) checkpoint.plain_check = std::move(*plain);
  if (confirmation.refuted()) {  // nothing the search accepted meanwhile stands
    searched->stop = search::StopReason::unconfirmed;
    checkpoint.state = std::move(before);
    checkpoint.steps.erase(checkpoint.steps.begin() + static_cast<std::ptrdiff_t>(prior_steps), checkpoint.steps.end());
    for (const RunPhase& phase : after_search_phases()) phase.forget(checkpoint);
    checkpoint.finished = true;
    minimized = false;
  }
  result.stop = searched->stop;
  result.error = searched->error;
  checkpoint.stop = search::to_string(searched->stop);
  if (checkpoint.finished && minimized)
    if (auto kept = keep_only_result(place, checkpoint.state.document); !kept) return kept.error();
  if (auto saved = place.save_checkpoint(checkpoint); !saved) return saved.error();
  result.checkpoint = std::move(checkpoint);
  return result;
}

}  // namespace minifyd::run
