// The --check-str match.
#include "daemon/verdict/failure_check.h"

namespace minifyd {

Expected<FailureCheck> FailureCheck::with_check_str(const std::string& pattern) {
  FailureCheck check;
  try {
    check.regex_ = std::regex(pattern, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    return make_error(ErrorKind::invalid_input, "--check-str '" + pattern + "' is not a valid regular expression: " + e.what());
  }
  check.pattern_ = pattern;
  return check;
}

bool FailureCheck::counts(const protocol::Verdict& verdict) const {
  if (verdict.pass) return false;
  if (!regex_) return true;
  std::string text = verdict.exception_type + ": " + verdict.message + "\n" + verdict.signal + "\n" + verdict.stderr_tail;
  return std::regex_search(text, *regex_);
}

}  // namespace minifyd
