// The plain check's judgement of how the original's repro.py ended in plain PyTorch against the
// worker's verdict (run/plain_check.h); the check itself runs end to end in the real and inductor labels.
#include <catch2/catch.hpp>

#include "daemon/run/plain_check.h"

using namespace minifyd;
using namespace std::chrono_literals;

namespace {

run::PlainRun exited(std::int64_t code, const std::string& tail) {
  run::PlainRun run;
  run.exit = code;
  run.seconds = 3.5;
  run.stderr_tail = tail;
  run.last_line = tail.substr(tail.rfind('\n', tail.size() - 2) + 1);
  if (!run.last_line.empty() && run.last_line.back() == '\n') run.last_line.pop_back();
  return run;
}

run::PlainRun killed(const std::string& signal) {
  run::PlainRun run;
  run.signal = signal;
  run.stderr_tail = "free(): invalid pointer\n";
  run.last_line = "free(): invalid pointer";
  return run;
}

verdict::FailureSignature exception(const std::string& type) {
  verdict::FailureSignature signature;
  signature.kind = protocol::FailureKind::exception;
  signature.exception_type = type;
  return signature;
}

verdict::FailureSignature of_kind(protocol::FailureKind kind) {
  verdict::FailureSignature signature;
  signature.kind = kind;
  return signature;
}

std::string outcome(const run::PlainRun& run, const verdict::FailureSignature& worker) {
  return run::judge_plain_run(run, worker, 80s).outcome;
}

}  // namespace

TEST_CASE("the plain check: an exception shows when its type is in the repro's traceback") {
  auto keyerror = exited(1, "Traceback (most recent call last):\n  File ...\nKeyError: 'buf12'\n");
  CHECK(outcome(keyerror, exception("KeyError")) == protocol::plain_check_fails);
  CHECK(outcome(keyerror, exception("ValueError")) == protocol::plain_check_differs);
  // Dotted and C++ names match by their last part; a wrapper names the inner type in its message.
  auto wrapped = exited(1, "torch._inductor.exc.InductorError: CppCompileError: C++ compile error\n");
  CHECK(outcome(wrapped, exception("torch._inductor.exc.CppCompileError")) == protocol::plain_check_fails);
  CHECK(outcome(exited(1, "RuntimeError: shape\n"), exception("c10::Error")) == protocol::plain_check_differs);
  // A repro that cannot even be read is no exception of the compiler's.
  CHECK(outcome(exited(1, "IndentationError: expected an indented block\n"), exception("AssertionError")) ==
        protocol::plain_check_differs);
}

TEST_CASE("the plain check: a crash shows as a signal, an accuracy bug as PyTorch's AccuracyError") {
  auto crash = of_kind(protocol::FailureKind::crash);
  crash.signal = "SIGABRT";
  // glibc's heap checks in the worker abort where plain malloc may fault later: any signal.
  CHECK(outcome(killed("SIGSEGV"), crash) == protocol::plain_check_fails);
  CHECK(outcome(exited(1, "KeyError: 'x'\n"), crash) == protocol::plain_check_differs);
  crash.message = std::string(verdict::non_std_cpp_exception);
  CHECK(outcome(exited(1, "RuntimeError: unhandled error\n"), crash) == protocol::plain_check_fails);

  auto accuracy = of_kind(protocol::FailureKind::accuracy);
  CHECK(outcome(exited(1, "torch._dynamo.debug_utils.AccuracyError: Bad accuracy detected\n"), accuracy) ==
        protocol::plain_check_fails);
  CHECK(outcome(killed("SIGSEGV"), accuracy) == protocol::plain_check_differs);
}

TEST_CASE("the plain check: exit 0 passes whatever the worker saw, and a hang is only a timeout's") {
  CHECK(outcome(exited(0, ""), exception("KeyError")) == protocol::plain_check_passes);
  CHECK(outcome(exited(0, ""), of_kind(protocol::FailureKind::timeout)) == protocol::plain_check_passes);
  run::PlainRun hung;
  hung.timed_out = true;
  CHECK(outcome(hung, of_kind(protocol::FailureKind::timeout)) == protocol::plain_check_fails);
  CHECK(outcome(hung, of_kind(protocol::FailureKind::crash)) == protocol::plain_check_differs);
  CHECK(run::judge_plain_run(hung, of_kind(protocol::FailureKind::crash), 80s).detail == "no end within 80 s");
}

TEST_CASE("the plain check's detail is how the repro ended; only a shown failure or a skip confirms") {
  auto judged = run::judge_plain_run(exited(1, "Traceback\nKeyError: 'buf12'\n"), exception("KeyError"), 80s);
  CHECK(judged.detail == "exit 1: KeyError: 'buf12'");
  CHECK(judged.seconds == 3.5);
  CHECK(run::judge_plain_run(killed("SIGABRT"), of_kind(protocol::FailureKind::crash), 80s).detail ==
        "killed by SIGABRT: free(): invalid pointer");
  CHECK(run::plain_check_confirms(judged));
  CHECK(run::plain_check_confirms(run::plain_check_skipped("--nan")));
  CHECK_FALSE(run::plain_check_confirms(run::judge_plain_run(exited(0, ""), exception("KeyError"), 80s)));
  CHECK_FALSE(run::plain_check_confirms(run::judge_plain_run(killed("SIGSEGV"), exception("KeyError"), 80s)));
}

TEST_CASE("the plain check is for the torch.compile backends, skipped without a sanity check or with --nan") {
  run::RunSpec spec;
  spec.evaluation.backend = "inductor";
  CHECK(run::has_plain_check(spec.evaluation));
  CHECK(run::plain_check_skip_reason(spec).empty());
  spec.evaluation.nan_check = true;
  CHECK(run::plain_check_skip_reason(spec) == "PyTorch's repro.py has no NaN check (--nan)");
  spec.skip_sanity = true;
  CHECK(run::plain_check_skip_reason(spec) == "--skip-sanity: the original was not checked");
  spec.evaluation.backend = "eager";
  CHECK_FALSE(run::has_plain_check(spec.evaluation));
}
