// The run: its original imported, its first checkpoint, and a session answering its phases.
#include "daemon/run/minification.h"

#include <chrono>
#include <optional>
#include <string>

#include "common/canonical_hash.h"
#include "common/log.h"
#include "daemon/run/run_phases.h"
#include "daemon/search/strategy_registry.h"
#include "daemon/shrink/input_shrink.h"

namespace minifyd::run {
namespace {

// Answers the session's phases in order, each timeline mark open across the phases that name it. A
// phase's error ends the session once the plain check beside it has ended.
Expected<void> answer_phases(PhaseContext& context) {
  std::optional<TimelinePhase> marked;
  const char* mark = nullptr;
  for (const RunPhase& phase : session_phases()) {
    if (!phase.asked(context)) continue;
    if (phase.timeline_mark != mark) {
      marked.reset();
      mark = phase.timeline_mark;
      if (mark != nullptr) marked.emplace(context.hooks.timeline, mark);
    }
    log::debug("phase: " + std::string(phase.name));
    if (auto answered = phase.answer(context); !answered) {
      marked.reset();
      context.confirmation.wait();
      return answered.error();
    }
  }
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

Expected<Checkpoint> begin_run(RunSpec spec, GraphDocument original, const RunPlace& place) {
  if (auto strategies = search::select_strategies(spec.strategies); !strategies) return strategies.error();
  Checkpoint checkpoint;
  checkpoint.spec = std::move(spec);
  checkpoint.original_hash = canonical_hash(original);
  checkpoint.state.document = std::move(original);
  checkpoint.original = shape_of(checkpoint.state);
  checkpoint.original_data = shrink::data_size(checkpoint.state.document);
  if (auto saved = place.save_checkpoint(checkpoint); !saved) return saved.error();
  return checkpoint;
}

Expected<RunResult> continue_run(Checkpoint checkpoint, const RunPlace& place, const pool::PoolAccess& pool,
                                 const SessionHooks& hooks) {
  auto started = std::chrono::steady_clock::now();
  const RunSpec& spec = checkpoint.spec;
  if (auto strategies = search::select_strategies(spec.strategies); !strategies) return strategies.error();
  auto check = verdict::failure_check_of(spec.evaluation);
  if (!check) return check.error();
  verdict::FailureJudge judge(std::move(*check), spec.match);
  if (checkpoint.signature) judge.expect(*checkpoint.signature);
  search::VerdictCache cache(evaluation_key(spec));
  if (checkpoint.verdicts_key == cache.evaluation_key())
    for (const CachedVerdict& verdict : checkpoint.verdicts) cache.store(verdict.hash, verdict.fails);
  PoolEvaluator evaluator(pool, spec.evaluation, place.store.root(), judge, checkpoint.original_hash,
                          spec.timeout_follows_original, place.vouched);
  PlainConfirmation own_confirmation;
  PlainConfirmation& confirmation = hooks.plain_check != nullptr ? *hooks.plain_check : own_confirmation;
  PhaseContext context{checkpoint, place, pool, hooks, judge, cache, evaluator, confirmation, started};
  // A resumed run checked its original in an earlier session.
  context.checks_original = !spec.skip_sanity && !checkpoint.signature && checkpoint.steps.empty();
  context.candidates = spec.evaluation;
  if (auto answered = answer_phases(context); !answered) return answered.error();
  if (confirmation.refuted())
    for (const RunPhase& phase : session_phases())
      if (phase.forget != nullptr) phase.forget(checkpoint);

  const search::SearchResult& searched = **context.searched;
  RunResult result;
  result.tally = evaluator.tally();
  result.candidate_timeout = evaluator.timeout();
  result.session_queries = searched.counters.queries;
  result.session_lineages = searched.counters.lineages;
  result.session_speculative_queries = searched.counters.speculative_queries;
  result.stop = searched.stop;
  result.error = searched.error;
  checkpoint.stop = search::to_string(searched.stop);
  if (auto saved = place.save_checkpoint(checkpoint); !saved) return saved.error();
  result.checkpoint = std::move(checkpoint);
  return result;
}

}  // namespace minifyd::run
