// Verdict encoding, decoding and one-line descriptions.
#include "protocol/verdict.h"

#include "common/json_view.h"
#include "protocol/enum_names.h"
#include "protocol/json_fields.h"

namespace minifyd::protocol {
namespace {

constexpr EnumName<AccuracyMode> accuracy_names[] = {{AccuracyMode::off, "off"},
                                                    {AccuracyMode::accuracy, "accuracy"},
                                                    {AccuracyMode::strict_accuracy, "strict-accuracy"}};
constexpr EnumName<FailureKind> kind_names[] = {{FailureKind::crash, "crash"},
                                                {FailureKind::exception, "exception"},
                                                {FailureKind::accuracy, "accuracy"},
                                                {FailureKind::timeout, "timeout"},
                                                {FailureKind::nan, "nan"},
                                                {FailureKind::cuda_error, "cuda_error"}};

constexpr auto accuracy_report_fields = [](auto& report, auto&& field) {
  field("max_abs_error", report.max_abs_error);
  field("max_rel_error", report.max_rel_error);
  field("rmse_compiled", report.rmse_compiled);
  field("rmse_eager", report.rmse_eager);
};

// A failed verdict's members beside its status; texts left empty are absent.
constexpr auto failure_fields = [](auto& verdict, auto&& field) {
  const std::string none;
  field("kind", verdict.kind);
  field("signal", verdict.signal, none);
  field("exception_type", verdict.exception_type, none);
  field("raised_at", verdict.raised_at, none);
  field("message", verdict.message, none);
  field("node", verdict.node, none);
  field("op", verdict.op, none);
  field("stderr_tail", verdict.stderr_tail, none);
  field("accuracy", verdict.accuracy);
};

}  // namespace

const char* to_string(AccuracyMode mode) { return name_of(accuracy_names, mode); }
std::optional<AccuracyMode> parse_accuracy_mode(const std::string& name) { return parse_name(accuracy_names, name); }
const char* to_string(FailureKind kind) { return name_of(kind_names, kind); }
std::optional<FailureKind> parse_failure_kind(const std::string& name) { return parse_name(kind_names, name); }

nlohmann::json encode(AccuracyMode mode) { return to_string(mode); }
Expected<void> decode(const JsonView& view, AccuracyMode& mode) {
  return decode_name(view, mode, accuracy_names, "mode");
}

nlohmann::json encode(FailureKind kind) { return to_string(kind); }
Expected<void> decode(const JsonView& view, FailureKind& kind) {
  return decode_name(view, kind, kind_names, "failure kind");
}

nlohmann::json encode(const AccuracyReport& report) { return encode_fields(report, accuracy_report_fields); }
Expected<void> decode(const JsonView& view, AccuracyReport& report) {
  return decode_fields(view, report, accuracy_report_fields);
}

Verdict crash_verdict(const ExitStatus& status, std::string stderr_tail) {
  Verdict verdict = Verdict::failed(FailureKind::crash, "worker " + describe(status));
  verdict.signal = status.signaled ? signal_name(status.signal) : "";
  verdict.stderr_tail = std::move(stderr_tail);
  return verdict;
}

nlohmann::json encode(const Verdict& verdict) {
  if (verdict.pass) return {{"status", "pass"}};
  return encode_fields(verdict, failure_fields, {{"status", "fail"}});
}

Expected<Verdict> decode_verdict(const nlohmann::json& json) { return decode_message<Verdict>(JsonView(json)); }

Expected<void> decode(const JsonView& view, Verdict& verdict) {
  std::string status;
  if (auto read = view.read("status", status); !read) return read.error();
  verdict = Verdict::passed();
  if (status == "pass") return {};
  if (status != "fail") return view.error("status: '" + status + "' is neither pass nor fail");
  verdict.pass = false;
  return decode_fields(view, verdict, failure_fields);
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
