// The still-failing rule.
#include "daemon/verdict/failure_judge.h"

namespace minifyd::verdict {

const char* to_string(MatchMode mode) { return mode == MatchMode::same ? "same" : "any"; }

Expected<MatchMode> parse_match_mode(const std::string& name) {
  if (name == "same") return MatchMode::same;
  if (name == "any") return MatchMode::any;
  return make_error(ErrorKind::invalid_input, "unknown match mode '" + name + "' (same, any)");
}

nlohmann::json encode(MatchMode mode) { return to_string(mode); }
Expected<void> decode(const JsonView& view, MatchMode& mode) {
  auto name = view.as_string();
  if (!name) return name.error();
  auto parsed = parse_match_mode(*name);
  if (!parsed) return view.error(parsed.error().message);
  mode = *parsed;
  return {};
}

bool FailureJudge::counts(const protocol::Verdict& verdict) const {
  return !verdict.pass && why_not(verdict).empty();
}

std::string FailureJudge::why_not(const protocol::Verdict& verdict) const {
  if (verdict.pass) return {};
  if (!check_.counts(verdict)) return "it does not match --check-str";
  if (match_ == MatchMode::any || !expected_) return {};
  if (shows(verdict, *expected_)) return {};
  return "a different failure (" + describe(signature_of(verdict)) + ", not " + describe(*expected_) + ")";
}

}  // namespace minifyd::verdict
