// The run: store preparation, propagation, the search session, outputs.
#include "daemon/run/minification.h"

#include <chrono>

#include "common/canonical_hash.h"
#include "common/content_store.h"
#include "common/graph_codec.h"
#include "common/log.h"
#include "daemon/pool/pool_runner.h"
#include "daemon/run/output_writer.h"
#include "daemon/search/minifier.h"
#include "daemon/search/strategy_registry.h"

namespace minifyd::run {
namespace {

// Store roots of a run: the original's blobs and its intermediates while the search needs them,
// then only the result's.
constexpr const char* original_root = "run-original";
constexpr const char* intermediates_root = "run-intermediates";
constexpr const char* result_root = "run-result";

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Copies the blobs the original names from its graph directory's store, verified on the way.
Expected<void> import_blobs(const GraphDocument& original, const std::filesystem::path& graph_dir,
                            const ContentStore& store) {
  auto source = ContentStore::open(graph_dir / store_dir_name, false);
  if (!source) return source.error();
  auto lock = store.lock_shared();
  if (!lock) return lock.error();
  std::vector<std::string> hashes = original.blob_hashes();
  for (const std::string& hash : hashes) {
    if (store.contains(hash)) continue;
    auto bytes = source->get(hash);
    if (!bytes) return bytes.error();
    if (auto put = store.put(bytes->data(), bytes->size()); !put) return put.error();
  }
  return store.write_root(original_root, hashes);
}

// The run's pool: one slot per worker, the spec's limits on each worker.
PoolConfig pool_config(const RunSettings& settings, const EvaluationSpec& spec) {
  PoolConfig config;
  config.worker = settings.worker;
  apply_limits(spec, config.worker);
  config.slots.assign(std::max<std::size_t>(settings.workers, 1), PoolSlot{});
  return config;
}

// The original's eager intermediates (fx_minifier's ConcreteProp), written into the run's store
// by a worker and rooted under the run's own name.
Expected<std::vector<protocol::PropagatedValue>> propagate(PoolRunner& runner, const GraphDocument& original,
                                                           const ContentStore& store,
                                                           std::chrono::milliseconds timeout) {
  protocol::PropagateRequest request;
  request.graph = encode_graph_document(original);
  request.store = store.root().string();
  WorkerOutcome outcome = runner.request(std::move(request), timeout);
  if (auto* fault = std::get_if<WorkerFault>(&outcome))
    return make_error(ErrorKind::io, "propagating the original's intermediates: " + fault->describe() +
                                         (fault->stderr_tail.empty() ? "" : "\nworker stderr:\n" + fault->stderr_tail));
  const auto& reply = std::get<protocol::WorkerReply>(outcome);
  if (auto* error = std::get_if<protocol::ErrorReply>(&reply))
    return make_error(ErrorKind::invalid_input, "propagating the original's intermediates: " + error->message);
  auto* propagated = std::get_if<protocol::PropagateReply>(&reply);
  if (propagated == nullptr) return make_error(ErrorKind::io, "propagate: the worker answered with a verdict");
  std::vector<std::string> hashes;
  for (const auto& value : propagated->values) hashes.push_back(value.storage.hash);
  if (auto rooted = store.write_root(intermediates_root, hashes); !rooted) return rooted.error();
  if (auto removed = store.remove_root(propagated->root); !removed) return removed.error();
  return propagated->values;
}

// Records every accepted reduction in the checkpoint (and on disk) before the search goes on.
class Session final : public search::SearchObserver {
 public:
  Session(Checkpoint& checkpoint, const RunSettings& settings, const search::VerdictCache& cache,
          const PoolEvaluator& evaluator, const FailureJudge& judge, Clock::time_point started)
      : checkpoint_(checkpoint), settings_(settings), cache_(cache), evaluator_(evaluator), judge_(judge),
        prior_(checkpoint.totals), started_(started) {
    checkpoint_.totals.sessions = prior_.sessions + 1;
    checkpoint_.stop.clear();
  }

  void on_progress(const search::SearchProgress& progress) override {
    if (settings_.observer != nullptr) settings_.observer->on_progress(with_totals(progress));
  }

  void on_accepted(const search::SearchState& state, const search::SearchProgress& progress) override {
    search::SearchProgress total = with_totals(progress);
    checkpoint_.state = search::clone_state(state);
    checkpoint_.steps.push_back(AcceptedStep{std::string(progress.strategy), progress.granularity,
                                             shape_of(state), total.queries});
    update(total.queries, total.cache_hits);
    if (auto written = write_checkpoint(checkpoint_, settings_.out_dir); !written)
      log::warn("could not write the checkpoint: " + written.error().message);
    if (settings_.observer != nullptr) settings_.observer->on_accepted(state, total);
  }

  // Brings the totals, signature and cache up to date with this session's figures.
  void update(std::uint64_t queries, std::uint64_t cache_hits) {
    checkpoint_.totals.queries = queries;
    checkpoint_.totals.cache_hits = cache_hits;
    // Every crash and hang became a verdict, whether its worker died or only the worker's child.
    const auto& failures = evaluator_.tally().failures_by_kind;
    auto count = [&](protocol::FailureKind kind) {
      auto it = failures.find(protocol::to_string(kind));
      return it == failures.end() ? 0 : it->second;
    };
    checkpoint_.totals.crashes_contained = prior_.crashes_contained + count(protocol::FailureKind::crash);
    checkpoint_.totals.timeouts = prior_.timeouts + count(protocol::FailureKind::timeout);
    checkpoint_.totals.wall_seconds = prior_.wall_seconds + seconds_since(started_);
    checkpoint_.signature = judge_.expected();
    checkpoint_.verdicts_key = cache_.evaluation_key();
    checkpoint_.verdicts = cache_.known();
  }

  search::SearchProgress with_totals(search::SearchProgress progress) const {
    progress.start_nodes = checkpoint_.original.nodes;
    progress.queries += prior_.queries;
    progress.cache_hits += prior_.cache_hits;
    return progress;
  }

 private:
  Checkpoint& checkpoint_;
  const RunSettings& settings_;
  const search::VerdictCache& cache_;
  const PoolEvaluator& evaluator_;
  const FailureJudge& judge_;
  RunTotals prior_;
  Clock::time_point started_;
};

std::optional<std::size_t> remaining(std::optional<std::size_t> limit, std::uint64_t used) {
  if (!limit) return std::nullopt;
  return used >= *limit ? 0 : *limit - static_cast<std::size_t>(used);
}

// Drops what only the search needed from the store: the result's blobs stay.
Expected<void> keep_only_result(const ContentStore& store, const GraphDocument& result) {
  if (auto rooted = store.write_root(result_root, result.blob_hashes()); !rooted) return rooted.error();
  for (const char* root : {original_root, intermediates_root})
    if (auto removed = store.remove_root(root); !removed) return removed.error();
  auto collected = store.gc();
  if (!collected) return collected.error();
  return {};
}

// The search from the checkpoint's state to the end, then the outputs.
// `started`: when this session began (its setup counts in the wall time).
Expected<RunResult> search_session(Checkpoint checkpoint, PoolRunner& runner, const ContentStore& store,
                                   const RunSettings& settings, Clock::time_point started) {
  const RunSpec& spec = checkpoint.spec;
  auto strategies = search::select_strategies(spec.strategies);
  if (!strategies) return strategies.error();
  auto check = failure_check_of(spec.evaluation);
  if (!check) return check.error();
  FailureJudge judge(std::move(*check), spec.match);
  if (checkpoint.signature) judge.expect(*checkpoint.signature);
  search::VerdictCache cache(evaluation_key(spec));
  if (checkpoint.verdicts_key == cache.evaluation_key())
    for (const auto& [hash, fails] : checkpoint.verdicts) cache.store(hash, fails);

  search::SearchOptions options;
  options.max_granularity = spec.max_granularity;
  // A resumed run checked its original in an earlier session.
  options.skip_sanity = spec.skip_sanity || checkpoint.signature.has_value() || !checkpoint.steps.empty();
  options.strategies = *strategies;
  options.runner.budget.max_queries = remaining(spec.max_queries, checkpoint.totals.queries);
  if (spec.max_time_seconds) {
    double left = std::max(0.0, *spec.max_time_seconds - checkpoint.totals.wall_seconds);
    options.runner.budget.max_time = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(left));
  }

  PoolEvaluator evaluator(runner.io, runner.pool, settings.workers, spec.evaluation, store.root(), judge,
                          checkpoint.original_hash);
  Session session(checkpoint, settings, cache, evaluator, judge, started);
  search::SteadyClock clock;
  std::uint64_t prior_queries = checkpoint.totals.queries;
  std::uint64_t prior_hits = checkpoint.totals.cache_hits;
  auto searched = search::minify(search::clone_state(checkpoint.state), evaluator, cache, clock, options, &session);
  if (!searched) return searched.error();

  RunResult result;
  result.stop = searched->stop;
  result.error = searched->error;
  result.tally = evaluator.tally();
  result.session_queries = searched->counters.queries;
  session.update(prior_queries + searched->counters.queries, prior_hits + searched->counters.cache_hits);
  checkpoint.stop = search::to_string(searched->stop);
  if (searched->stop != search::StopReason::original_passes) {
    checkpoint.state = std::move(searched->best);
    checkpoint.finished = searched->stop != search::StopReason::error;
    if (auto written = write_outputs(checkpoint, result, settings); !written) return written.error();
    if (checkpoint.finished)
      if (auto kept = keep_only_result(store, checkpoint.state.document); !kept) return kept.error();
  } else {
    checkpoint.finished = true;
  }
  if (auto written = write_checkpoint(checkpoint, settings.out_dir); !written) return written.error();
  result.checkpoint = std::move(checkpoint);
  return result;
}

}  // namespace

Expected<RunResult> start_run(const RunSpec& spec, const RunSettings& settings) {
  Clock::time_point started = Clock::now();
  std::filesystem::path graph_dir(spec.graph_dir);
  auto original = load_graph_dir(graph_dir);
  if (!original) return original.error();
  if (auto strategies = search::select_strategies(spec.strategies); !strategies) return strategies.error();
  std::error_code error;
  if (std::filesystem::exists(settings.out_dir / checkpoint_file_name, error))
    return make_error(ErrorKind::invalid_input, settings.out_dir.string() +
                                                    " already holds a run: resume it with --resume, or choose another --out");
  std::filesystem::create_directories(settings.out_dir, error);
  if (error) return make_error(ErrorKind::io, "creating " + settings.out_dir.string() + ": " + error.message());
  auto store = ContentStore::open(settings.out_dir / store_dir_name, true);
  if (!store) return store.error();
  if (auto imported = import_blobs(*original, graph_dir, *store); !imported)
    return imported.error().with_context("importing " + graph_dir.string());

  PoolRunner runner(pool_config(settings, spec.evaluation));
  auto eager = propagate(runner, *original, *store, spec.evaluation.timeout);
  if (!eager) return eager.error();

  Checkpoint checkpoint;
  checkpoint.spec = spec;
  checkpoint.original_hash = canonical_hash(*original);
  checkpoint.state.document = std::move(*original);
  checkpoint.state.eager = std::make_shared<const search::EagerValues>(search::eager_values_from(*eager));
  checkpoint.original = shape_of(checkpoint.state);
  checkpoint.eager = std::move(*eager);
  if (auto written = write_checkpoint(checkpoint, settings.out_dir); !written) return written.error();
  return search_session(std::move(checkpoint), runner, *store, settings, started);
}

Expected<RunResult> resume_run(const RunSettings& settings) {
  Clock::time_point started = Clock::now();
  auto checkpoint = read_checkpoint(settings.out_dir);
  if (!checkpoint) return checkpoint.error();
  if (checkpoint->finished)
    return make_error(ErrorKind::invalid_input, settings.out_dir.string() + " holds a finished run (" +
                                                    checkpoint->stop + "): nothing to resume");
  auto store = ContentStore::open(settings.out_dir / store_dir_name, false);
  if (!store) return store.error();
  log::info("resuming at " + std::to_string(checkpoint->state.document.graph.size()) + " nodes after " +
            std::to_string(checkpoint->totals.queries) + " queries");
  PoolRunner runner(pool_config(settings, checkpoint->spec.evaluation));
  return search_session(std::move(*checkpoint), runner, *store, settings, started);
}

}  // namespace minifyd::run
