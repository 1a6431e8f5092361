// The --check-str match, with RE2.
#include "daemon/verdict/failure_check.h"

#include <algorithm>

#include <re2/re2.h>

namespace minifyd::verdict {
namespace {

constexpr std::size_t max_message_bytes = 64 * 1024;
constexpr std::size_t max_stderr_bytes = 32 * 1024;

}  // namespace

Expected<FailureCheck> FailureCheck::with_check_str(const std::string& pattern) {
  RE2::Options options;
  options.set_log_errors(false);  // the error goes back to the user, not to stderr
  auto regex = std::make_shared<const RE2>(pattern, options);
  if (!regex->ok())
    return make_error(ErrorKind::invalid_input,
                      "--check-str '" + pattern + "' is not a valid regular expression for RE2 (" + regex->error() +
                          "): patterns match in linear time, so backreferences and lookaround are not supported");
  FailureCheck check;
  check.regex_ = std::move(regex);
  check.pattern_ = pattern;
  return check;
}

std::string check_str_text(const protocol::Verdict& verdict) {
  const std::string& tail = verdict.stderr_tail;
  return verdict.exception_type.substr(0, 1024) + ": " + verdict.message.substr(0, max_message_bytes) + "\n" +
         verdict.signal.substr(0, 64) + "\n" + tail.substr(tail.size() - std::min(tail.size(), max_stderr_bytes));
}

bool FailureCheck::counts(const protocol::Verdict& verdict) const {
  if (verdict.pass) return false;
  if (!regex_) return true;
  return RE2::PartialMatch(check_str_text(verdict), *regex_);
}

}  // namespace minifyd::verdict
