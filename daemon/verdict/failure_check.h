// What counts as "still failing": the verdict fails, and matches --check-str when one is given
// (searched in the exception type and message, the signal and the worker's stderr tail, as the
// seeds search a repro's output for check_str). The pattern is RE2's (docs/cli.md#--check-str): a
// match takes time linear in the text, which is bounded, so no pattern can stall the thread that
// judges a verdict (minifyd's io thread among them).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "common/expected.h"
#include "protocol/verdict.h"

namespace re2 {
class RE2;
}

namespace minifyd::verdict {

class FailureCheck {
 public:
  FailureCheck() = default;
  // A pattern RE2 cannot take (invalid, or a backreference or lookaround, which need backtracking)
  // is an error naming --check-str and the pattern.
  static Expected<FailureCheck> with_check_str(const std::string& pattern);

  bool counts(const protocol::Verdict& verdict) const;
  const std::optional<std::string>& check_str() const { return pattern_; }

 private:
  std::optional<std::string> pattern_;
  std::shared_ptr<const re2::RE2> regex_;  // immutable, so copies share it across threads
};

// What --check-str searches in a verdict: its exception type, the head of its message, its signal
// and the end of its stderr tail: at most 64 KiB of the message and 32 KiB of stderr, whatever the
// worker sent.
std::string check_str_text(const protocol::Verdict& verdict);

}  // namespace minifyd::verdict
