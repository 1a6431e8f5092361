// One daemon job's run, on a thread of its own: it begins the run (or continues it from the
// checkpoint in the job store) on the job's share of the daemon's pool, saves a checkpoint to the
// job store after every accepted reduction, and records how the job ended. Progress and the end are
// reported to the daemon's io thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "common/content_store.h"
#include "daemon/run/minification.h"
#include "daemon/service/fair_scheduler.h"
#include "daemon/service/job_spec.h"
#include "daemon/service/job_store.h"
#include "protocol/job_events.h"

namespace minifyd::service {

// What every job of a daemon shares.
struct JobContext {
  JobStore& jobs;
  const ContentStore& store;  // the state directory's
  boost::asio::io_context& daemon_io;
  FairScheduler& scheduler;
  std::size_t parallelism = 1;  // the pool's slots: how many candidates a job keeps in flight
  std::function<Expected<std::string>()> python;  // the torch.compile backends', for the plain check
};

// Where a job's run keeps its blobs (the shared store, under its prefix) and checkpoints (the job store);
// once `lost` is set, its saves are refused without asking the job store.
run::RunPlace job_place(const JobContext& context, const JobClaim& claim, const std::string& store_prefix,
                        const std::atomic<bool>* lost = nullptr);

// Once a job is done: its result's blobs (`hashes`) rooted as `kept`, and every other root of its
// store prefix dropped, other sessions' too (the daemon collects the blobs they kept).
// Only the session whose end the job store recorded calls it: one that lost its claim may still be
// writing roots of its own.
Expected<void> keep_only_job_result(const ContentStore& store, const std::string& store_prefix, const std::string& kept,
                                    const std::vector<std::string>& hashes);

// Why a job is stopped before it ends by itself. lease_lost: a shared queue's daemon whose claim
// another daemon took (or may have taken: its renewals failed for a lease) stops writing at once.
enum class StopCause { cancel, shutdown, lease_lost };

class JobThread {
 public:
  // Called on the daemon's io thread: progress events while the job runs, then once its end event
  // after the job store has recorded the end (or, for a shutdown, left the job to be resumed).
  using EventSink = std::function<void(std::int64_t id, protocol::JobEvent event)>;

  // Starts the thread. `job` was claimed (state running) from context.jobs.
  JobThread(const JobContext& context, JobRecord job, EventSink on_event);
  // Joins the thread: call after the end event arrived, or after stop(), from a thread other than
  // the daemon's io thread while the job may still wait for the pool.
  ~JobThread();
  JobThread(const JobThread&) = delete;
  JobThread& operator=(const JobThread&) = delete;

  // The search stops before its next query; evaluations already running finish first.
  void stop(StopCause cause);
  std::int64_t id() const { return claim_.id; }
  // The claim it runs under, which the job's writes name.
  const JobClaim& claim() const { return claim_; }
  // Whether its claim was found lost (another daemon took the job over): it writes nothing more.
  bool lost() const { return lost_; }

 private:
  void run(JobRecord job);
  // One session of the job's run, from the checkpoint the record holds (or from its start).
  Expected<run::RunResult> attempt(const JobRecord& job);
  // After a write the disk had no room for: waits until the state directory's file system has some
  // again (true), or the job is stopped meanwhile (false).
  bool wait_for_room(const Error& error);
  // The job's final state in the job store, and its end event.
  protocol::EndEvent record_end(const Expected<run::RunResult>& result);
  // The end event of a job stopped before its end: cancelled (and recorded so), or left running in
  // the job store for the next start to resume.
  protocol::EndEvent left_to_resume();
  // Whether the job's claim is this runner's no more: its lease ran out and it was claimed again (or
  // ended) since, by another daemon of a shared queue. Its writes have been refused since then.
  bool claim_lost();
  // The end event of a job whose claim was lost: nothing recorded, another daemon has the job.
  protocol::EndEvent lost_claim() const;

  JobContext context_;
  JobClaim claim_;
  std::string store_prefix_;  // the job spec's, once attempt() read it
  EventSink on_event_;
  std::atomic<bool> interrupt_{false};
  std::atomic<bool> cancelled_{false};
  std::atomic<bool> lost_{false};
  std::thread thread_;
};

}  // namespace minifyd::service
