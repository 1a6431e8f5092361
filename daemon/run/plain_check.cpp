// The plain check: a scratch graph directory, minifyd/plain_check.py, and the judgement.
#include "daemon/run/plain_check.h"

#include <cctype>

#include "daemon/process/python_helper.h"
#include "daemon/pool/worker_program.h"
#include "daemon/run/scratch_graph_dir.h"
#include "protocol/json_fields.h"

namespace minifyd::run {
namespace {

constexpr auto plain_run_fields = [](auto& run, auto&& field) {
  field("exit", run.exit);
  field("signal", run.signal);
  field("timed_out", run.timed_out);
  field("seconds", run.seconds);
  field("stderr_tail", run.stderr_tail);
  field("last_line", run.last_line);
};

// How the repro ended, in words: "exit 1: ValueError: ...", "killed by SIGABRT: free(): invalid pointer".
std::string ending_of(const PlainRun& run, std::chrono::milliseconds timeout) {
  std::string ending;
  if (run.timed_out) {
    ending = "no end within " + std::to_string(timeout.count() / 1000) + " s";
  } else if (run.signal) {
    ending = "killed by " + *run.signal;
  } else {
    ending = "exit " + std::to_string(run.exit.value_or(-1));
  }
  return run.last_line.empty() || run.exit == 0 ? ending : ending + ": " + run.last_line;
}

bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

// Whether `name` occurs in `text` as a whole name (`Error` is not in `RuntimeError`).
bool names(const std::string& text, const std::string& name) {
  for (std::size_t at = text.find(name); at != std::string::npos; at = text.find(name, at + 1)) {
    bool starts = at == 0 || !is_name_char(text[at - 1]);
    bool ends = at + name.size() == text.size() || !is_name_char(text[at + name.size()]);
    if (starts && ends) return true;
  }
  return false;
}

// Whether the repro's end shows the worker's kind of failure.
bool shows_same_kind(const PlainRun& run, const verdict::FailureSignature& worker) {
  bool raised = run.exit && *run.exit != 0;
  switch (worker.kind) {
    case protocol::FailureKind::exception: {
      // `torch._inductor.exc.CppCompileError` is named so in the traceback; a wrapper of PyTorch's
      // (InductorError, LoweringException) names the inner type in its message.
      std::string type = worker.exception_type.substr(worker.exception_type.rfind('.') + 1);
      type = type.substr(type.rfind(':') + 1);
      return raised && !type.empty() && names(run.stderr_tail, type);
    }
    case protocol::FailureKind::crash:
      // Inductor's bindings turn a C++ exception not derived from std::exception into an exception
      // where the loop ran serially; one signature either way (failure_signature.h).
      return run.signal.has_value() || (raised && worker.message == verdict::non_std_cpp_exception);
    case protocol::FailureKind::accuracy:
      return raised && names(run.stderr_tail, "AccuracyError");
    case protocol::FailureKind::cuda_error:
      return (raised || run.signal) && run.stderr_tail.find("CUDA") != std::string::npos;
    case protocol::FailureKind::timeout:
      return run.timed_out;
    default:
      return raised || run.signal || run.timed_out;
  }
}

}  // namespace

bool has_plain_check(const verdict::EvaluationSpec& evaluation) {
  return pool::is_torch_compile_backend(evaluation.backend);
}

std::string plain_check_skip_reason(const RunSpec& spec) {
  if (spec.skip_sanity) return "--skip-sanity: the original was not checked";
  if (spec.evaluation.nan_check) return "PyTorch's repro.py has no NaN check (--nan)";
  if (!spec.evaluation.op_libraries.empty())
    return "repro.py does not load the job's operator libraries (--op-library): load them in your own process";
  return "";
}

protocol::PlainCheck plain_check_skipped(const std::string& why) {
  return protocol::PlainCheck{protocol::plain_check_skipped, why, 0};
}

Expected<void> decode(const JsonView& view, PlainRun& run) { return protocol::decode_fields(view, run, plain_run_fields); }

protocol::PlainCheck judge_plain_run(const PlainRun& run, const verdict::FailureSignature& worker, std::chrono::milliseconds timeout) {
  protocol::PlainCheck check;
  check.seconds = run.seconds;
  check.detail = ending_of(run, timeout);
  if (run.exit == 0)
    check.outcome = protocol::plain_check_passes;
  else
    check.outcome = shows_same_kind(run, worker) ? protocol::plain_check_fails : protocol::plain_check_differs;
  return check;
}

Expected<PlainRun> run_under_plain_pytorch(const PlainCheckInput& input) {
  auto scratch = ScratchGraphDir::write(*input.original, input.store, "minifyd-plain-check-");
  if (!scratch) return scratch.error().with_context("no scratch graph directory");
  std::vector<std::string> arguments = {scratch->path().string(), "--backend", input.evaluation->backend, "--timeout",
                                        std::to_string(std::chrono::duration<double>(input.timeout).count())};
  for (const auto& [key, value] : input.evaluation->backend_options) {
    arguments.push_back("--backend-opt");
    arguments.push_back(key + "=" + value);
  }
  if (input.evaluation->accuracy != protocol::AccuracyMode::off) arguments.push_back("--accuracy");
  // plain_check.py keeps the repro to input.timeout itself; this bounds the python around it.
  double helper_limit = std::chrono::duration<double>(input.timeout).count() + 60;
  Expected<std::string> output = process::run_python_main(input.python, "plain_check", arguments, helper_limit, {}, input.cancel);
  if (!output) return output.error().with_context("could not run it");
  nlohmann::json json = nlohmann::json::parse(*output, nullptr, /*allow_exceptions=*/false);
  auto run = protocol::decode_message<PlainRun>(json);
  if (!run) return run.error().with_context("minifyd/plain_check.py printed no result");
  return run;
}

protocol::PlainCheck judge_plain_check(const Expected<PlainRun>& run, const verdict::FailureSignature& worker,
                                       std::chrono::milliseconds timeout) {
  if (!run) return plain_check_skipped(run.error().message);
  return judge_plain_run(*run, worker, timeout);
}

protocol::PlainCheck check_under_plain_pytorch(const PlainCheckInput& input, const verdict::FailureSignature& worker) {
  return judge_plain_check(run_under_plain_pytorch(input), worker, input.timeout);
}

bool plain_check_confirms(const protocol::PlainCheck& check) {
  return check.outcome == protocol::plain_check_fails || check.outcome == protocol::plain_check_skipped;
}

}  // namespace minifyd::run
