// A job's thread.
#include "daemon/service/job_thread.h"

#include <chrono>
#include <filesystem>
#include <thread>

#include <boost/asio/post.hpp>

#include "common/graph_codec.h"
#include "common/log.h"
#include "daemon/run/phases/plain_check_phase.h"
#include "daemon/run/report.h"
#include "daemon/run/run_summary.h"
#include "daemon/service/job_result.h"
#include "daemon/service/shared_pool_client.h"

namespace minifyd::service {
namespace {

using Clock = std::chrono::steady_clock;

protocol::ProgressEvent progress_event(std::int64_t id, const search::SearchProgress& progress,
                                       Clock::time_point started) {
  return protocol::ProgressEvent{id,
                                 std::string(progress.strategy),
                                 progress.granularity,
                                 progress.nodes,
                                 progress.start_nodes,
                                 progress.queries,
                                 progress.cache_hits,
                                 std::chrono::duration<double>(Clock::now() - started).count()};
}

// Forwards the search's progress to the daemon's io thread.
class ProgressForwarder final : public search::SearchObserver {
 public:
  ProgressForwarder(boost::asio::io_context& daemon_io, std::int64_t id, JobThread::EventSink sink)
      : daemon_io_(daemon_io), id_(id), sink_(std::move(sink)) {}

  void on_progress(const search::SearchProgress& progress) override { forward(progress); }
  void on_accepted(const search::SearchState&, const search::SearchProgress& progress) override { forward(progress); }

 private:
  void forward(const search::SearchProgress& progress) {
    boost::asio::post(daemon_io_, [sink = sink_, id = id_, event = progress_event(id_, progress, started_)] {
      sink(id, event);
    });
  }

  boost::asio::io_context& daemon_io_;
  std::int64_t id_;
  JobThread::EventSink sink_;
  Clock::time_point started_ = Clock::now();
};

// The stop reason a checkpoint recorded (search::to_string's text).
search::StopReason stop_of(const std::string& text) {
  for (auto reason : {search::StopReason::finished, search::StopReason::original_passes, search::StopReason::unconfirmed,
                      search::StopReason::query_budget, search::StopReason::time_budget,
                      search::StopReason::interrupted})
    if (text == search::to_string(reason)) return reason;
  return search::StopReason::error;
}

}  // namespace

run::RunPlace job_place(const JobContext& context, const JobClaim& claim, const std::string& store_prefix,
                        const std::atomic<bool>* lost) {
  JobStore& jobs = context.jobs;
  // A claim found lost writes nothing more: the job store would refuse it, and may not answer.
  auto held = [claim, lost]() -> Expected<void> {
    if (lost != nullptr && *lost) return make_error(ErrorKind::not_found, not_running(claim) + ": its claim was lost");
    return {};
  };
  return run::RunPlace{context.store,
                       store_prefix,
                       [&jobs, claim, held](const run::Checkpoint& checkpoint) -> Expected<void> {
                         if (auto holding = held(); !holding) return holding;
                         return jobs.save_checkpoint(claim, run::encode(checkpoint).dump());
                       },
                       [&jobs, claim, held](const analysis::AnalysisFiles& files) -> Expected<void> {
                         if (auto holding = held(); !holding) return holding;
                         return jobs.save_analysis(claim, analysis::encode_analysis_files(files));
                       },
                       session_suffix(claim.session),
                       false};
}

Expected<void> keep_only_job_result(const ContentStore& store, const std::string& store_prefix, const std::string& kept,
                                    const std::vector<std::string>& hashes) {
  if (auto rooted = store.write_root(kept, hashes); !rooted) return rooted.error();
  auto roots = store.root_names();
  if (!roots) return roots.error();
  for (const std::string& root : *roots) {
    auto parsed = parse_job_root(root);
    if (!parsed || parsed->prefix != store_prefix || root == kept) continue;
    if (auto removed = store.remove_root(root); !removed) return removed.error();
  }
  return {};
}

JobThread::JobThread(const JobContext& context, JobRecord job, EventSink on_event)
    : context_(context), claim_(job.claim()), on_event_(std::move(on_event)) {
  thread_ = std::thread([this, job = std::move(job)]() mutable { run(std::move(job)); });
}

JobThread::~JobThread() {
  if (thread_.joinable()) thread_.join();
}

void JobThread::stop(StopCause cause) {
  if (cause == StopCause::cancel) cancelled_ = true;
  if (cause == StopCause::lease_lost) lost_ = true;
  interrupt_ = true;
}

Expected<run::RunResult> JobThread::attempt(const JobRecord& job) {
  auto spec = decode_job_spec(job.spec_json);
  if (!spec) return spec.error();
  store_prefix_ = spec->store_prefix;
  run::RunPlace place = job_place(context_, claim_, spec->store_prefix, &lost_);
  SharedPoolClient pool(context_.daemon_io, context_.scheduler, context_.parallelism);
  ProgressForwarder progress(context_.daemon_io, claim_.id, on_event_);
  run::SessionHooks hooks{&progress, &interrupt_, std::nullopt, context_.python, nullptr};
  run::PlainConfirmation plain_check;
  Expected<run::Checkpoint> checkpoint = make_error(ErrorKind::not_found, "no checkpoint");
  if (job.checkpoint_json) {
    nlohmann::json json = nlohmann::json::parse(*job.checkpoint_json, nullptr, false);
    if (json.is_discarded()) return make_error(ErrorKind::corrupt, "the job's checkpoint is not JSON");
    checkpoint = run::decode_checkpoint(json);
    if (!checkpoint) return checkpoint.error().with_context("the job's checkpoint");
    log::info("job " + std::to_string(claim_.id) + ": resuming at " +
              std::to_string(checkpoint->state.document.graph.size()) + " nodes after " +
              std::to_string(checkpoint->totals.queries) + " queries");
  } else {
    auto original = parse_graph_document(job.graph_json, spec->run.evaluation.operators());
    if (!original) return original.error().with_context("the job's graph");
    // The plain check's fresh python starts while the original propagates.
    run::start_plain_check(plain_check, spec->run, *original, place, hooks);
    hooks.plain_check = &plain_check;
    checkpoint = run::begin_run(spec->run, std::move(*original), place);
    if (!checkpoint) return checkpoint.error();
  }
  if (checkpoint->finished) {
    // The previous daemon finished the search but died before recording the end.
    run::RunResult ended;
    ended.stop = stop_of(checkpoint->stop);
    ended.checkpoint = std::move(*checkpoint);
    return ended;
  }
  return run::continue_run(std::move(*checkpoint), place, pool.access(), hooks);
}

bool JobThread::wait_for_room(const Error& error) {
  log::warn("job " + std::to_string(claim_.id) + ": " + error.message + ": it waits for room, then goes on");
  constexpr std::uint64_t room_bytes = 1u << 20;
  for (;;) {
    for (int tick = 0; tick < 10; ++tick) {
      if (interrupt_) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    std::error_code ignored;
    if (std::filesystem::space(context_.store.root(), ignored).available >= room_bytes) return true;
  }
}

void JobThread::run(JobRecord job) {
  Expected<run::RunResult> result = attempt(job);
  // A full disk is not the job's failure: it waits for room and resumes from its last checkpoint
  // the job store holds, as a restarted daemon would.
  while (!result && result.error().kind == ErrorKind::no_space && wait_for_room(result.error())) {
    auto stored = context_.jobs.get(claim_.id);
    result = stored ? attempt(*stored) : Expected<run::RunResult>(stored.error());
  }
  protocol::EndEvent end = claim_lost()                                                 ? lost_claim()
                           : !result && result.error().kind == ErrorKind::no_space ? left_to_resume()
                                                                                   : record_end(result);
  boost::asio::post(context_.daemon_io, [sink = on_event_, id = claim_.id, end = std::move(end)] { sink(id, end); });
}

bool JobThread::claim_lost() {
  if (lost_) return true;
  // A write refused since the last renewal ended the run with an error that is not the job's.
  auto job = context_.jobs.summary(claim_.id);
  if (job && (job->state != JobState::running || job->sessions != claim_.session)) lost_ = true;
  return lost_;
}

protocol::EndEvent JobThread::lost_claim() const {
  log::warn(job_name(claim_.id) + ": its claim (session " + std::to_string(claim_.session) +
            ") was lost: another daemon of the queue resumes it from its last checkpoint");
  protocol::EndEvent event;
  event.job = claim_.id;
  event.state = protocol::job_state_interrupted;
  event.message = "this daemon's lease on the job ran out: another daemon of the queue resumes it from its checkpoint";
  return event;
}

protocol::EndEvent JobThread::left_to_resume() {
  if (cancelled_) {
    if (auto recorded = context_.jobs.finish(claim_, JobState::cancelled, "cancelled"); !recorded)
      log::error("job " + std::to_string(claim_.id) + ": " + recorded.error().message);
    protocol::EndEvent event;
    event.job = claim_.id;
    event.state = to_string(JobState::cancelled);
    return event;
  }
  protocol::EndEvent event;
  event.job = claim_.id;
  event.state = protocol::job_state_interrupted;
  event.message = "the daemon is stopping; the job resumes from its checkpoint when it starts again";
  return event;
}

protocol::EndEvent JobThread::record_end(const Expected<run::RunResult>& result) {
  auto finish = [&](JobState state, const std::string& text, protocol::EndEvent event) {
    // An end the disk has no room for is recorded once it has; stopped meanwhile, the job stays
    // running in the store and its next start records it from the checkpoint.
    auto recorded = context_.jobs.finish(claim_, state, text);
    while (!recorded && recorded.error().kind == ErrorKind::no_space) {
      if (!wait_for_room(recorded.error())) return left_to_resume();
      recorded = context_.jobs.finish(claim_, state, text);
    }
    if (!recorded) log::error("job " + std::to_string(claim_.id) + ": " + recorded.error().message);
    if (recorded && state == JobState::done) {
      std::string kept = job_place(context_, claim_, store_prefix_).result_root();
      auto hashes = result->checkpoint.state.document.blob_hashes();
      if (auto dropped = keep_only_job_result(context_.store, store_prefix_, kept, hashes); !dropped)
        log::warn("job " + std::to_string(claim_.id) + ": dropping what its search stored: " + dropped.error().message);
    }
    event.job = claim_.id;
    event.state = to_string(state);
    return event;
  };
  auto failed = [&](const std::string& message) {
    protocol::EndEvent event;
    event.error = message;
    return finish(JobState::failed, message, std::move(event));
  };
  if (!result) {
    log::warn("job " + std::to_string(claim_.id) + " failed: " + result.error().message);
    return failed(result.error().message);
  }
  switch (result->stop) {
    case search::StopReason::interrupted:
      // A shutdown: the job stays running in the store and resumes at the next start.
      return left_to_resume();
    case search::StopReason::original_passes:
    case search::StopReason::unconfirmed:
      return failed(run::why_nothing_minimized(*result));
    case search::StopReason::error:
      return failed(result->error ? result->error->message : "the search stopped on an error");
    default: {
      JobResult done{run::summary_of(*result), run::render_report(result->checkpoint, *result, context_.parallelism)};
      protocol::EndEvent event;
      event.summary = done.summary;
      return finish(JobState::done, encode(done).dump(), std::move(event));
    }
  }
}

}  // namespace minifyd::service
