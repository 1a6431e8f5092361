#include "daemon/run/plain_confirmation.h"

#include <memory>
#include <utility>

#include "common/log.h"

namespace minifyd::run {
namespace {

void log_outcome(const protocol::PlainCheck& check) {
  log::info("under plain PyTorch the original " + check.outcome + ": " + check.detail);
}

}  // namespace

PlainConfirmation::~PlainConfirmation() {
  if (running_.valid()) running_.wait();
}

void PlainConfirmation::start(PlainCheckRequest request, Timeline* timeline) {
  if (running_.valid() || result_) return;
  running_ = std::async(std::launch::async, [this, request = std::move(request), timeline] {
    TimelinePhase checking(timeline, "plain_check");
    PlainCheckInput input{request.python, &request.original, request.store, &request.evaluation, request.timeout};
    protocol::PlainCheck check = check_under_plain_pytorch(input, request.expected);
    log_outcome(check);
    if (!plain_check_confirms(check)) refuted_ = true;
    return check;
  });
}

void PlainConfirmation::skip(const std::string& reason) {
  if (running_.valid() || result_) return;
  result_ = plain_check_skipped(reason);
  log_outcome(*result_);
}

std::optional<protocol::PlainCheck> PlainConfirmation::wait() {
  if (running_.valid()) result_ = running_.get();
  return result_;
}

}  // namespace minifyd::run
