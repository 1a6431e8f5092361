// The still-failing rule.
#include "daemon/verdict/failure_judge.h"

#include "protocol/enum_names.h"

namespace minifyd::verdict {

namespace {

constexpr protocol::EnumName<MatchMode> match_names[] = {{MatchMode::same, "same"}, {MatchMode::any, "any"}};
constexpr const char* match_what = "match mode";

}  // namespace

const char* to_string(MatchMode mode) { return protocol::name_of(match_names, mode); }

Expected<MatchMode> parse_match_mode(const std::string& name) {
  if (auto parsed = protocol::parse_name(match_names, name)) return *parsed;
  return make_error(ErrorKind::invalid_input, protocol::unknown_name(match_names, match_what, name));
}

nlohmann::json encode(MatchMode mode) { return to_string(mode); }
Expected<void> decode(const JsonView& view, MatchMode& mode) {
  return protocol::decode_name(view, mode, match_names, match_what);
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
