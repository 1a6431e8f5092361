// Verdict encoding, decoding and one-line descriptions.
#include "protocol/verdict.h"

#include "common/json_view.h"
#include "protocol/json_fields.h"

namespace minifyd::protocol {
namespace {

constexpr std::pair<AccuracyMode, const char*> accuracy_names[] = {
    {AccuracyMode::off, "off"},
    {AccuracyMode::accuracy, "accuracy"},
    {AccuracyMode::strict_accuracy, "strict-accuracy"}};
constexpr std::pair<FailureKind, const char*> kind_names[] = {{FailureKind::crash, "crash"},
                                                              {FailureKind::exception, "exception"},
                                                              {FailureKind::accuracy, "accuracy"},
                                                              {FailureKind::timeout, "timeout"},
                                                              {FailureKind::nan, "nan"},
                                                              {FailureKind::cuda_error, "cuda_error"}};

template <class Enum, std::size_t N>
const char* name_of(const std::pair<Enum, const char*> (&names)[N], Enum value) {
  for (const auto& [candidate, name] : names)
    if (candidate == value) return name;
  return "unknown";
}

template <class Enum, std::size_t N>
std::optional<Enum> parse_name(const std::pair<Enum, const char*> (&names)[N], const std::string& text) {
  for (const auto& [candidate, name] : names)
    if (text == name) return candidate;
  return std::nullopt;
}

}  // namespace

const char* to_string(AccuracyMode mode) { return name_of(accuracy_names, mode); }
std::optional<AccuracyMode> parse_accuracy_mode(const std::string& name) { return parse_name(accuracy_names, name); }
const char* to_string(FailureKind kind) { return name_of(kind_names, kind); }
std::optional<FailureKind> parse_failure_kind(const std::string& name) { return parse_name(kind_names, name); }

nlohmann::json encode(AccuracyMode mode) { return to_string(mode); }
Expected<void> decode(const JsonView& view, AccuracyMode& mode) {
  auto name = view.as_string();
  if (!name) return name.error();
  auto parsed = parse_accuracy_mode(*name);
  if (!parsed) return view.error("unknown mode '" + *name + "'");
  mode = *parsed;
  return {};
}

nlohmann::json encode(FailureKind kind) { return to_string(kind); }
Expected<void> decode(const JsonView& view, FailureKind& kind) {
  auto name = view.as_string();
  if (!name) return name.error();
  auto parsed = parse_failure_kind(*name);
  if (!parsed) return view.error("unknown failure kind '" + *name + "'");
  kind = *parsed;
  return {};
}

Verdict crash_verdict(const ExitStatus& status, std::string stderr_tail) {
  Verdict verdict;
  verdict.pass = false;
  verdict.kind = FailureKind::crash;
  verdict.signal = status.signaled ? signal_name(status.signal) : "";
  verdict.message = "worker " + describe(status);
  verdict.stderr_tail = std::move(stderr_tail);
  return verdict;
}

nlohmann::json encode(const Verdict& verdict) {
  if (verdict.pass) return {{"status", "pass"}};
  nlohmann::json json{{"status", "fail"}, {"kind", to_string(verdict.kind)}};
  auto put_text = [&](const char* key, const std::string& value) {
    if (!value.empty()) json[key] = value;
  };
  put_text("signal", verdict.signal);
  put_text("exception_type", verdict.exception_type);
  put_text("raised_at", verdict.raised_at);
  put_text("message", verdict.message);
  put_text("node", verdict.node);
  put_text("op", verdict.op);
  put_text("stderr_tail", verdict.stderr_tail);
  if (verdict.accuracy) {
    const AccuracyReport& report = *verdict.accuracy;
    json["accuracy"] = {{"max_abs_error", encode_float(report.max_abs_error)},
                        {"max_rel_error", encode_float(report.max_rel_error)},
                        {"rmse_compiled", encode_float(report.rmse_compiled)},
                        {"rmse_eager", encode_float(report.rmse_eager)}};
  }
  return json;
}

Expected<Verdict> decode_verdict(const nlohmann::json& json) { return decode_message<Verdict>(JsonView(json)); }

Expected<void> decode(const JsonView& view, Verdict& verdict) {
  std::string status;
  if (auto read = view.read("status", status); !read) return read.error();
  verdict = Verdict::passed();
  if (status == "pass") return {};
  if (status != "fail") return view.error("status: '" + status + "' is neither pass nor fail");
  verdict.pass = false;
  std::string kind;
  if (auto read = view.read("kind", kind); !read) return read.error();
  auto parsed = parse_failure_kind(kind);
  if (!parsed) return view.error("kind: unknown failure kind '" + kind + "'");
  verdict.kind = *parsed;
  for (auto [key, target] : {std::pair{"signal", &verdict.signal},
                             std::pair{"exception_type", &verdict.exception_type},
                             std::pair{"raised_at", &verdict.raised_at},
                             std::pair{"message", &verdict.message}, std::pair{"node", &verdict.node},
                             std::pair{"op", &verdict.op}, std::pair{"stderr_tail", &verdict.stderr_tail}})
    if (auto read = view.read_optional(key, *target); !read) return read.error();
  auto accuracy = view.optional_field("accuracy");
  if (!accuracy) return accuracy.error();
  if (*accuracy) {
    AccuracyReport report;
    for (auto [key, target] : {std::pair{"max_abs_error", &report.max_abs_error},
                               std::pair{"max_rel_error", &report.max_rel_error},
                               std::pair{"rmse_compiled", &report.rmse_compiled},
                               std::pair{"rmse_eager", &report.rmse_eager}}) {
      auto member = (*accuracy)->field(key);
      if (!member) return member.error();
      auto number = member->as_float();
      if (!number) return number.error();
      *target = *number;
    }
    verdict.accuracy = report;
  }
  return {};
}

std::string describe(const Verdict& verdict) {
  if (verdict.pass) return "pass";
  std::string text = std::string("fail: ") + to_string(verdict.kind);
  switch (verdict.kind) {
    case FailureKind::crash: text += " (" + (verdict.signal.empty() ? verdict.message : verdict.signal) + ")"; break;
    case FailureKind::exception:
      text += " " + verdict.exception_type;
      if (!verdict.raised_at.empty()) text += " raised at " + verdict.raised_at;
      text += ": " + verdict.message;
      break;
    case FailureKind::accuracy:
      if (verdict.accuracy)
        text += " (max abs error " + std::to_string(verdict.accuracy->max_abs_error) + ", rmse compiled " +
                std::to_string(verdict.accuracy->rmse_compiled) + " vs eager " +
                std::to_string(verdict.accuracy->rmse_eager) + ")";
      break;
    case FailureKind::timeout:
    case FailureKind::nan:
    case FailureKind::cuda_error: text += " (" + verdict.message + ")"; break;
  }
  if (!verdict.node.empty()) text += " at node '" + verdict.node + "'";
  return text;
}

}  // namespace minifyd::protocol
