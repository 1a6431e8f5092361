// What counts as "still failing": the verdict fails, and matches --check-str when one is given
// (searched in the exception type and message, the signal and the worker's stderr tail, as the
// seeds search a repro's output for check_str).
#pragma once

#include <optional>
#include <regex>
#include <string>

#include "common/expected.h"
#include "protocol/verdict.h"

namespace minifyd {

class FailureCheck {
 public:
  FailureCheck() = default;
  // An invalid regular expression is an error naming it.
  static Expected<FailureCheck> with_check_str(const std::string& pattern);

  bool counts(const protocol::Verdict& verdict) const;
  const std::optional<std::string>& check_str() const { return pattern_; }

 private:
  std::optional<std::string> pattern_;
  std::optional<std::regex> regex_;
};

}  // namespace minifyd
