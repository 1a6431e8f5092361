#include "daemon/run/plain_confirmation.h"

#include <utility>

#include "common/log.h"

namespace minifyd::run {
namespace {

void log_outcome(const protocol::PlainCheck& check) {
  log::info("under plain PyTorch the original " + check.outcome + ": " + check.detail);
}

}  // namespace

PlainConfirmation::~PlainConfirmation() {
  unwanted_ = true;
  if (running_.valid()) running_.wait();
}

void PlainConfirmation::start(PlainCheckRequest request, Timeline* timeline) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (running_.valid() || result_) return;
  timeout_ = request.timeout;
  running_ = std::async(std::launch::async, [this, request = std::move(request), timeline] {
    Expected<PlainRun> ran = make_error(ErrorKind::io, "not run");
    {
      TimelinePhase checking(timeline, "plain_check");
      PlainCheckInput input{request.python, &request.original, request.store, &request.evaluation, request.timeout,
                            &unwanted_};
      ran = run_under_plain_pytorch(input);
    }
    std::lock_guard<std::mutex> answered(mutex_);  // the thread's own: start()'s lock is long released
    ran_ = std::move(ran);
    judge_when_ready();
  });
}

void PlainConfirmation::expect(verdict::FailureSignature worker) {
  std::lock_guard<std::mutex> lock(mutex_);
  expected_ = std::move(worker);
  judge_when_ready();
}

void PlainConfirmation::judge_when_ready() {
  if (!ran_ || !expected_ || result_) return;
  result_ = judge_plain_check(*ran_, *expected_, timeout_);
  log_outcome(*result_);
  if (!plain_check_confirms(*result_)) refuted_ = true;
}

void PlainConfirmation::skip(const std::string& reason) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (result_) return;
  result_ = plain_check_skipped(reason);
  log_outcome(*result_);
}

bool PlainConfirmation::pending() {
  std::lock_guard<std::mutex> lock(mutex_);
  return running_.valid() && !result_;
}

std::optional<protocol::PlainCheck> PlainConfirmation::wait() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!expected_ && !result_) unwanted_ = true;
  }
  if (running_.valid()) running_.get();
  std::lock_guard<std::mutex> lock(mutex_);
  return result_;
}

}  // namespace minifyd::run
