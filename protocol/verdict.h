// The verdict on one candidate: pass, or a classified failure (BRIEF "Verdicts").
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "common/exit_status.h"
#include "common/expected.h"
#include "common/json_view.h"

namespace minifyd::protocol {

enum class AccuracyMode { off, accuracy, strict_accuracy };

enum class FailureKind {
  crash,      // the worker died by a signal (signal names it)
  exception,  // the backend or an operator threw (exception_type, message)
  accuracy,   // outputs differ from the eager and fp64 references (accuracy holds the figures)
  timeout,    // no answer within the query's time limit; the worker was killed
  nan,        // the compiled output holds NaN or Inf while no input does (message names the output)
  cuda_error, // CUDA reported an error (message: CUDA's); the worker's CUDA context is poisoned, so
              // it answers this and retires
};

const char* to_string(AccuracyMode mode);
std::optional<AccuracyMode> parse_accuracy_mode(const std::string& name);
const char* to_string(FailureKind kind);
std::optional<FailureKind> parse_failure_kind(const std::string& name);
// Both as their names, for field lists (json_fields.h).
nlohmann::json encode(AccuracyMode mode);
Expected<void> decode(const JsonView& view, AccuracyMode& mode);
nlohmann::json encode(FailureKind kind);
Expected<void> decode(const JsonView& view, FailureKind& kind);

// Compiled and eager outputs measured against the fp64 reference (the seeds' same_two_models).
struct AccuracyReport {
  double max_abs_error = 0;   // compiled vs eager
  double max_rel_error = 0;   // compiled vs eager
  double rmse_compiled = 0;   // compiled vs fp64
  double rmse_eager = 0;      // eager vs fp64
};
nlohmann::json encode(const AccuracyReport& report);
Expected<void> decode(const JsonView& view, AccuracyReport& report);

// The exception_type of a C++ exception not derived from std::exception: a catch (...) can read
// neither its type nor a message.
inline constexpr const char* unknown_exception_type = "unknown";

struct Verdict {
  bool pass = true;
  FailureKind kind = FailureKind::exception;  // meaningful only when !pass
  std::string signal;          // crash: "SIGSEGV"
  std::string exception_type;  // exception: "c10::Error"
  // exception: where the compiler raised it, when the worker can tell: the innermost frame of the
  // Python worker's traceback in a library's own code, "torch/_inductor/loop_body.py:get_read_expr"
  std::string raised_at;
  std::string message;         // exception message, or a description of the failure
  std::string node;            // the node being run when it failed, when known
  std::string op;              // its operator, when known
  std::optional<AccuracyReport> accuracy;
  std::string stderr_tail;     // the last lines the worker wrote to stderr

  static Verdict passed() { return Verdict{}; }
  // A failure of `kind`, described by `message`; its other members are the caller's to fill.
  static Verdict failed(FailureKind kind, std::string message) {
    Verdict verdict;
    verdict.pass = false;
    verdict.kind = kind;
    verdict.message = std::move(message);
    return verdict;
  }
};

// The verdict on a candidate whose process died while running it: a crash, named by its signal
// (or, for a process that exited, its exit code in the message).
Verdict crash_verdict(const ExitStatus& status, std::string stderr_tail);

nlohmann::json encode(const Verdict& verdict);
Expected<Verdict> decode_verdict(const nlohmann::json& json);
// The same, as a member of a message listed with json_fields.h.
Expected<void> decode(const JsonView& view, Verdict& verdict);

// One line for humans: "pass", "fail: crash (SIGSEGV)", "fail: exception c10::Error: ...",
// "fail: exception KeyError raised at torch/_inductor/loop_body.py:get_read_expr: 'buf10'".
std::string describe(const Verdict& verdict);

}  // namespace minifyd::protocol
