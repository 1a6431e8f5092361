// A run in OUT_DIR.
#include "daemon/run/out_dir_run.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>

#include "common/file_util.h"
#include "common/graph_codec.h"
#include "common/log.h"
#include "common/owner_lock.h"
#include "daemon/pool/command_pool.h"
#include "daemon/pool/local_pool.h"
#include "daemon/pool/worker_program.h"
#include "daemon/run/output_writer.h"
#include "daemon/run/phases/plain_check_phase.h"
#include "daemon/run/report.h"

namespace minifyd::run {
namespace {

RunPlace out_dir_place(ContentStore store, const std::filesystem::path& out_dir) {
  return RunPlace{std::move(store), "run",
                  [out_dir](const Checkpoint& checkpoint) { return write_checkpoint(checkpoint, out_dir); },
                  [out_dir](const analysis::AnalysisFiles& files) { return analysis::write_rendered_analysis(out_dir, files); },
                  {}};
}

// A request running this long yields its slot to a queued one (it runs on, in its own child). Only
// lineages queue more requests than there are slots, so without speculation parking changes
// nothing; with it, a hung candidate holds a slot this long instead of until its timeout. Short:
// on a chain of hangs, each level's re-verification and next candidate wait for it in turn
// (20 ms here cost the 1000-node hang chain 0.3 s).
constexpr std::chrono::milliseconds park_after{2};
constexpr std::chrono::milliseconds default_speculate_after{20};

// How soon the run speculates (search/speculation.h), if at all.
std::optional<std::chrono::milliseconds> speculation_of(const RunSettings& settings) {
  if (settings.speculate_after)
    return settings.speculate_after->count() > 0 ? settings.speculate_after : std::nullopt;
  return default_speculate_after;
}

// Whether the run's requests are parked when they run long (only with speculation). Not for the
// torch.compile backends: their every request compiles for a second or more on a core of its own, so
// parked requests would only share the cores with the slots' requests (on 2 cores, the chain's compile
// error took as long with parking as without, its compiles twice as long each); their lineages wait
// for a free slot instead.
bool parks(const RunSettings& settings, const verdict::EvaluationSpec& spec) {
  return speculation_of(settings) && !pool::is_torch_compile_backend(spec.backend);
}

// The run's pool: the worker serving the spec's backend on each slot (one for all when they see no GPU),
// with the run's limits, the GPUs hidden from a graph that uses none, parking when the search speculates.
Expected<pool::PoolConfig> pool_config(const RunSettings& settings, const verdict::EvaluationSpec& spec, const GraphDocument& original) {
  auto made = pool::command_pool_config(spec.backend, settings.workers, settings.sandbox, original, settings.slots);
  if (!made) return made.error();
  pool::PoolConfig config = std::move(*made);
  // Workers that see no GPU (hidden from them, and no slot pins one) serve in forked children: one
  // serves every slot.
  config.share_concurrent_workers =
      config.worker.cuda_visible_devices == std::optional<std::string>("") &&
      std::none_of(config.slots.begin(), config.slots.end(), [](const pool::PoolSlot& slot) { return slot.cuda_visible_devices.has_value(); });
  if (parks(settings, spec)) config.park_after = std::min(*speculation_of(settings), park_after);
  if (settings.timeline) config.on_event = settings.timeline->pool_sink();
  return config;
}

// `settings` with the python of the spec's backend found once, for its workers and its repro.py.
Expected<RunSettings> for_backend(const RunSettings& settings, const verdict::EvaluationSpec& spec) {
  auto workers = pool::with_python_found(spec.backend, settings.workers);
  if (!workers) return workers.error();
  RunSettings found = settings;
  found.workers = std::move(*workers);
  return found;
}

// The python for_backend() found, for the plain check and repro.py.
std::function<Expected<std::string>()> python_of(const RunSettings& settings) {
  return [python = settings.workers.python] { return Expected<std::string>(python); };
}

// The python that writes repro.py for a torch.compile backend, started while the session searches.
std::unique_ptr<StandbyPython> standby_for(const verdict::EvaluationSpec& evaluation, const RunSettings& settings) {
  if (!pool::is_torch_compile_backend(evaluation.backend)) return nullptr;
  return std::make_unique<StandbyPython>(settings.workers.python);
}

// A session's progress, speculation and python, from the settings.
SessionHooks session_hooks(const RunSettings& settings) {
  return SessionHooks{settings.observer, nullptr, speculation_of(settings), python_of(settings), settings.timeline};
}

// The outputs of a run that minimized something (a failing original), its best graph so far when
// the search stopped early. All but the report may have been written while the plain check ran
// (write_before_plain_verdict); if the check then refuted the original, they are removed.
class RunOutputs {
 public:
  RunOutputs(const RunSettings& settings, StandbyPython* standby)
      : settings_(settings), place_{settings.out_dir, settings.minify_executable, python_of(settings), standby} {}

  // SessionHooks::before_plain_verdict: the graph's outputs, the longest of them repro.py (a python's),
  // while the plain check's repro still runs. One that fails is written again at the end.
  void write_before_plain_verdict(SessionHooks& hooks) {
    hooks.before_plain_verdict = [this](const Checkpoint& checkpoint) {
      TimelinePhase writing(settings_.timeline, "outputs");
      auto written = write_graph_outputs(checkpoint, place_);
      if (!written) log::warn("the outputs, written beside the plain check: " + written.error().message);
      graph_outputs_written_ = written.has_value();
    };
  }

  Expected<RunResult> finish(RunResult result) {
    if (search::nothing_to_minimize(result.stop)) {
      if (graph_outputs_written_)
        if (auto removed = remove_graph_outputs(settings_.out_dir); !removed) return removed.error();
      return result;
    }
    TimelinePhase writing(settings_.timeline, "outputs");
    std::string report = render_report(result.checkpoint, result, settings_.slots.size());
    auto written = graph_outputs_written_ ? write_file_atomic(settings_.out_dir / report_file_name, report)
                                          : write_outputs(result.checkpoint, report, place_);
    if (!written) return written.error();
    return result;
  }

 private:
  const RunSettings& settings_;
  OutputPlace place_;
  bool graph_outputs_written_ = false;
};

// out_dir's owner lock (common/owner_lock.h) when the directory exists; none when it does not yet. One
// run writes OUT_DIR: a second one, or a resume, beside it is refused here, naming the first.
Expected<std::optional<OwnerLock>> own_if_present(const std::filesystem::path& out_dir) {
  std::error_code error;
  if (!std::filesystem::is_directory(out_dir, error)) return std::optional<OwnerLock>();
  auto lock = OwnerLock::acquire(out_dir);
  if (!lock) return lock.error();
  return std::optional<OwnerLock>(std::move(*lock));
}

// An error when out_dir holds a run already (its checkpoint).
Expected<void> holds_no_run(const std::filesystem::path& out_dir) {
  std::error_code error;
  if (std::filesystem::exists(out_dir / checkpoint_file_name, error))
    return make_error(ErrorKind::invalid_input,
                      out_dir.string() + " already holds a run: resume it with --resume, or choose another --out");
  return {};
}

// The run from `checkpoint` on the command's own pool, stopped once the run needs it no more, then its
// outputs: repro.py's python started ahead, the graph's outputs written beside the plain check.
Expected<RunResult> continue_with_outputs(Checkpoint checkpoint, const RunPlace& place, pool::LocalPool& runner,
                                          SessionHooks& hooks, const RunSettings& settings) {
  std::unique_ptr<StandbyPython> standby = standby_for(checkpoint.spec.evaluation, settings);
  RunOutputs outputs(settings, standby.get());
  outputs.write_before_plain_verdict(hooks);
  hooks.pool_done = [&runner] { runner.stop_soon(); };
  auto result = continue_run(std::move(checkpoint), place, runner.access(), hooks);
  if (!result) return result.error();
  return outputs.finish(std::move(*result));
}

}  // namespace

Expected<RunResult> start_run(const RunSpec& spec, const RunSettings& given) {
  // Before anything is written: a backend no worker serves, or no python for it, ends here.
  auto found = for_backend(given, spec.evaluation);
  if (!found) return found.error();
  const RunSettings& settings = *found;
  auto owner = own_if_present(settings.out_dir);
  if (!owner) return owner.error();
  if (auto empty = holds_no_run(settings.out_dir); !empty) return empty.error();
  std::filesystem::path graph_dir(spec.graph_dir);
  auto original = load_graph_dir(graph_dir, spec.evaluation.operators());
  if (!original) return original.error();
  auto pool = pool_config(settings, spec.evaluation, *original);
  if (!pool) return pool.error();
  // The workers load LibTorch (half a second of CPU each) while the graph's tensors are imported.
  pool::LocalPool runner(std::move(*pool));
  std::error_code error;
  std::filesystem::create_directories(settings.out_dir, error);
  if (error) return make_error(ErrorKind::io, "creating " + settings.out_dir.string() + ": " + error.message());
  if (!*owner) {  // created just now: another run may have created it too, and got ahead
    auto lock = OwnerLock::acquire(settings.out_dir);
    if (!lock) return lock.error();
    owner->emplace(std::move(*lock));
    if (auto empty = holds_no_run(settings.out_dir); !empty) return empty.error();
  }
  auto store = ContentStore::open(settings.out_dir / store_dir_name, true);
  if (!store) return store.error();
  auto source = ContentStore::open(graph_dir / store_dir_name, false);
  if (!source) return source.error().with_context("importing " + graph_dir.string());
  RunPlace place = out_dir_place(std::move(*store), settings.out_dir);
  if (auto imported = import_original(*original, *source, place); !imported)
    return imported.error().with_context("importing " + graph_dir.string());

  // The plain check's fresh python starts while the workers start and the original propagates.
  SessionHooks hooks = session_hooks(settings);
  PlainConfirmation plain_check;
  start_plain_check(plain_check, spec, *original, place, hooks);
  hooks.plain_check = &plain_check;
  auto checkpoint = begin_run(spec, std::move(*original), place);
  if (!checkpoint) return checkpoint.error();
  return continue_with_outputs(std::move(*checkpoint), place, runner, hooks, settings);
}

Expected<RunResult> resume_run(const RunSettings& given) {
  auto owner = own_if_present(given.out_dir);  // a missing directory has no checkpoint, as read_checkpoint says
  if (!owner) return owner.error();
  auto checkpoint = read_checkpoint(given.out_dir);
  if (!checkpoint) return checkpoint.error();
  auto found = for_backend(given, checkpoint->spec.evaluation);
  if (!found) return found.error();
  const RunSettings& settings = *found;
  if (checkpoint->finished) {
    bool nothing = checkpoint->stop == search::to_string(search::StopReason::original_passes) ||
                   checkpoint->stop == search::to_string(search::StopReason::unconfirmed);
    if (nothing || std::filesystem::exists(settings.out_dir / report_file_name))
      return make_error(ErrorKind::invalid_input, settings.out_dir.string() + " holds a finished run (" +
                                                      checkpoint->stop + "): nothing to resume");
    // Killed between the search's end and its outputs: write them now.
    RunResult result;
    result.stop = search::StopReason::finished;
    result.checkpoint = std::move(*checkpoint);
    return RunOutputs(settings, nullptr).finish(std::move(result));
  }
  auto store = ContentStore::open(settings.out_dir / store_dir_name, false);
  if (!store) return store.error();
  log::info("resuming at " + std::to_string(checkpoint->state.document.graph.size()) + " nodes after " +
            std::to_string(checkpoint->totals.queries) + " queries");
  RunPlace place = out_dir_place(std::move(*store), settings.out_dir);
  auto pool = pool_config(settings, checkpoint->spec.evaluation, checkpoint->state.document);
  if (!pool) return pool.error();
  pool::LocalPool runner(std::move(*pool));
  auto hooks = session_hooks(settings);
  return continue_with_outputs(std::move(*checkpoint), place, runner, hooks, settings);
}

}  // namespace minifyd::run
