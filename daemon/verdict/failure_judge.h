// Whether a verdict counts as "still failing" for the search: it fails, matches --check-str, and,
// unless --match any, has the original's signature (BRIEF "Verdicts").
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "common/expected.h"
#include "common/json_view.h"
#include "daemon/verdict/failure_check.h"
#include "daemon/verdict/failure_signature.h"
#include "protocol/verdict.h"

namespace minifyd::verdict {

enum class MatchMode {
  same,  // the original's signature
  any,   // any failure that passes the check
};

const char* to_string(MatchMode mode);
Expected<MatchMode> parse_match_mode(const std::string& name);
// As its name, for field lists (json_fields.h).
nlohmann::json encode(MatchMode mode);
Expected<void> decode(const JsonView& view, MatchMode& mode);

class FailureJudge {
 public:
  FailureJudge(FailureCheck check, MatchMode match) : check_(std::move(check)), match_(match) {}

  // The signature candidates must match; until one is set (the sanity check sets it), any failure
  // that passes the check counts.
  void expect(FailureSignature signature) { expected_ = std::move(signature); }
  const std::optional<FailureSignature>& expected() const { return expected_; }
  // Whether a failure cannot be judged yet: candidates must match a signature not yet known.
  bool awaits_signature() const { return match_ == MatchMode::same && !expected_; }

  bool counts(const protocol::Verdict& verdict) const;
  // Why a failing verdict does not count, for logs; empty when it counts or passes.
  std::string why_not(const protocol::Verdict& verdict) const;

 private:
  FailureCheck check_;
  MatchMode match_;
  std::optional<FailureSignature> expected_;
};

}  // namespace minifyd::verdict
