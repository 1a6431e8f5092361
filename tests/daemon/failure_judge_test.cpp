// Failure signatures and the still-failing rule: the search must not slip onto another bug.
#include <catch2/catch.hpp>

#include "daemon/verdict/failure_judge.h"
#include "protocol/json_fields.h"

using namespace minifyd;

namespace {

protocol::Verdict exception(const std::string& type, const std::string& message) {
  protocol::Verdict verdict;
  verdict.pass = false;
  verdict.kind = protocol::FailureKind::exception;
  verdict.exception_type = type;
  verdict.message = message;
  return verdict;
}

protocol::Verdict crash(const std::string& signal) {
  protocol::Verdict verdict;
  verdict.pass = false;
  verdict.kind = protocol::FailureKind::crash;
  verdict.signal = signal;
  verdict.message = "worker killed by " + signal;
  return verdict;
}

}  // namespace

TEST_CASE("messages are normalised to what survives shrinking the graph", "[failure_judge]") {
  CHECK(verdict::normalise_message("shape '[20, 20]' is invalid for input of size 400") ==
        "shape '[N, N]' is invalid for input of size N");
  CHECK(verdict::normalise_message("bad pointer 0x7ffd1234abcd in conv2d at sin_19") == "bad pointer N in conv2d at sin_N");
  CHECK(verdict::normalise_message("tolerance 1.5e-3 exceeded") == "tolerance Ne-N exceeded");
  CHECK(verdict::normalise_message("first line\nException raised from foo at bar.cpp:12 (most recent call first)") ==
        "first line");
  CHECK(verdict::normalise_message("trailing space  ") == "trailing space");
  // A generated file's path and its line:column, and a cache key, read the same in every candidate.
  CHECK(verdict::normalise_message(
            "C++ compile error: /tmp/torchinductor_root/ab/cabc7f2kq3nxy5d.cpp:41:12: error: 'compile' was not "
            "declared in this scope") ==
        "C++ compile error: <generated>: error: 'compile' was not declared in this scope");
  CHECK(verdict::normalise_message("Failed to import /tmp/tmpq1x/zz/czzqk4j5rl2f3mqbgnfb3kbcw5c5prn5zsxlx5oe7kzb.py") ==
        "Failed to import <generated>");
  CHECK(verdict::normalise_message("key fjq5ohbgxmwjzj4ynnrwvuyjybe6l6dyp3kgdh4xgdmb6blbw3lr missing") ==
        "key <hash> missing");
  // Paths of other files are left alone; one ending as a generated file does is one from its first '/'.
  CHECK(verdict::normalise_message("cannot open /etc/minifyd/settings.json") == "cannot open /etc/minifyd/settings.json");
  CHECK(verdict::normalise_message("torch/_inductor/ir.py:12 is where") == "torch<generated> is where");
  CHECK(verdict::normalise_message("  indented") == "indented");
}

TEST_CASE("names a compiler generates are normalised, other names kept", "[failure_judge]") {
  // Inductor's outer-loop-fusion KeyError (pytorch/pytorch#188228) names another buffer in every candidate.
  CHECK(verdict::normalise_message("'buf36'") == verdict::normalise_message("'buf12'"));
  CHECK(verdict::normalise_message("'buf36'") == "'bufN'");
  CHECK(verdict::normalise_message("tmp12 = tmp3 + op7 at x0 + 64*ks1 + s0") == "tmpN = tmpN + opN at xN + N*ksN + sN");
  CHECK(verdict::normalise_message("in cpp_fused_add_mul_sin_3 and triton_poi_fused_relu_0") == "in <kernel> and <kernel>");
  CHECK(verdict::normalise_message("arg3_1 feeds primals_12 and getitem_4") == "argN_N feeds primals_N and getitem_N");
  CHECK(verdict::normalise_message("convolution_backward_2 of conv2d in float16 on x86 sm_90") ==
        "convolution_backward_N of conv2d in float16 on xN sm_N");
  CHECK(verdict::normalise_message("bufferize buffer1 tmpfile stable") == "bufferize buffer1 tmpfile stable");
  CHECK(verdict::normalise_message("int64 bfloat16 log1p atan2 _foo_bar") == "int64 bfloat16 log1p atan2 _foo_bar");
}

TEST_CASE("an exception's raising frame is part of its signature", "[failure_judge]") {
  protocol::Verdict read_expr = exception("KeyError", "'buf36'");
  read_expr.raised_at = "torch/_inductor/loop_body.py:get_read_expr";
  protocol::Verdict renumbered = exception("KeyError", "'buf12'");
  renumbered.raised_at = read_expr.raised_at;
  protocol::Verdict elsewhere = exception("KeyError", "'buf12'");
  elsewhere.raised_at = "torch/_inductor/scheduler.py:get_buffer";

  verdict::FailureJudge judge(verdict::FailureCheck{}, verdict::MatchMode::same);
  judge.expect(verdict::signature_of(read_expr));
  CHECK(describe(*judge.expected()) == "exception KeyError raised at torch/_inductor/loop_body.py:get_read_expr: 'bufN'");
  CHECK(judge.counts(renumbered));
  CHECK_FALSE(judge.counts(elsewhere));
  CHECK_FALSE(judge.counts(exception("KeyError", "'buf12'")));

  auto decoded = protocol::decode_message<verdict::FailureSignature>(JsonView(encode(*judge.expected())));
  REQUIRE(decoded.has_value());
  CHECK(*decoded == *judge.expected());
  // A signature saved before the raising frame was known reads as one without it.
  auto older = protocol::decode_message<verdict::FailureSignature>(
      JsonView(nlohmann::json{{"kind", "exception"}, {"signal", ""}, {"exception_type", "KeyError"}, {"message", "'bufN'"}}));
  REQUIRE(older.has_value());
  CHECK(older->raised_at.empty());
}

TEST_CASE("signatures keep kind, signal, exception type and normalised message", "[failure_judge]") {
  verdict::FailureSignature segv = verdict::signature_of(crash("SIGSEGV"));
  CHECK(segv.kind == protocol::FailureKind::crash);
  CHECK(segv.signal == "SIGSEGV");
  CHECK(segv.message.empty());
  CHECK(describe(segv) == "crash (SIGSEGV)");

  verdict::FailureSignature thrown = verdict::signature_of(exception("c10::Error", "size 3 vs 4\nException raised from ..."));
  CHECK(thrown.exception_type == "c10::Error");
  CHECK(thrown.message == "size N vs N");
  CHECK(describe(thrown) == "exception c10::Error: size N vs N");

  protocol::Verdict accuracy;
  accuracy.pass = false;
  accuracy.kind = protocol::FailureKind::accuracy;
  accuracy.message = "max abs error 0.25";
  CHECK(verdict::signature_of(accuracy).message.empty());

  auto decoded = protocol::decode_message<verdict::FailureSignature>(JsonView(encode(thrown)));
  REQUIRE(decoded.has_value());
  CHECK(*decoded == thrown);
  auto bad = protocol::decode_message<verdict::FailureSignature>(JsonView(nlohmann::json{{"kind", "melted"}}));
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.error().message == "kind: unknown failure kind 'melted' (crash, exception, accuracy, timeout, nan, cuda_error)");
}

TEST_CASE("a C++ exception not derived from std::exception has one signature, caught or aborting",
          "[failure_judge]") {
  // Inductor's injected runtime_error throws an int: std::terminate aborts where the relu's loop
  // runs in an OpenMP region, Inductor's bindings catch it where the loop runs serially.
  protocol::Verdict aborted = crash("SIGABRT");
  aborted.stderr_tail = "W1125 warning\nterminate called after throwing an instance of 'int'\n";
  verdict::FailureSignature expected = verdict::signature_of(aborted);
  CHECK(describe(expected) == "crash (SIGABRT): C++ exception not derived from std::exception");
  CHECK(verdict::signature_of(exception("RuntimeError", "unhandled error")) == expected);
  CHECK(verdict::signature_of(exception(protocol::unknown_exception_type, "an exception not derived from std::exception")) ==
        expected);

  // Still distinct: another abort, an escaped std::exception (its what() is the bug), another
  // RuntimeError.
  CHECK(verdict::signature_of(crash("SIGABRT")) != expected);
  protocol::Verdict escaped_std = crash("SIGABRT");
  escaped_std.stderr_tail = "terminate called after throwing an instance of 'c10::Error'\n  what():  boom\n";
  CHECK(verdict::signature_of(escaped_std) != expected);
  CHECK(verdict::signature_of(exception("RuntimeError", "unhandled error in conv")) != expected);
  protocol::Verdict segv = crash("SIGSEGV");
  segv.stderr_tail = aborted.stderr_tail;
  CHECK(verdict::signature_of(segv) != expected);
}

TEST_CASE("an abort that lost its exception to a second terminate shows any expected abort", "[failure_judge]") {
  // Two OpenMP threads threw the injected int at once: the second's terminate spoke first.
  protocol::Verdict raced = crash("SIGABRT");
  raced.stderr_tail = "W1125 warning\nterminate called recursively\n";
  protocol::Verdict named = crash("SIGABRT");
  named.stderr_tail = "terminate called after throwing an instance of 'int'\n";
  verdict::FailureJudge judge(verdict::FailureCheck(), verdict::MatchMode::same);
  judge.expect(verdict::signature_of(named));
  CHECK(judge.counts(raced));
  judge.expect(verdict::signature_of(crash("SIGABRT")));
  CHECK(judge.counts(raced));
  // Not another signal's crash, nor an abort whose exception is named after the recursive line.
  judge.expect(verdict::signature_of(crash("SIGSEGV")));
  CHECK_FALSE(judge.counts(raced));
  judge.expect(verdict::signature_of(named));
  protocol::Verdict escaped_std = crash("SIGABRT");
  escaped_std.stderr_tail = "terminate called recursively\nterminate called after throwing an instance of 'c10::Error'\n"
                            "  what():  boom\n";
  CHECK_FALSE(judge.counts(escaped_std));
}

TEST_CASE("an original whose abort lost its exception is shown by any abort", "[failure_judge]") {
  // The original itself raced (PyTorch 2.11 on an H100, Inductor's injected throw in a 202-node
  // chain): the candidates' aborts name the exception, and must still count.
  protocol::Verdict raced = crash("SIGABRT");
  raced.stderr_tail = "terminate called recursively\n";
  verdict::FailureSignature expected = verdict::signature_of(raced);
  CHECK(expected.message == verdict::lost_exception);
  verdict::FailureJudge judge(verdict::FailureCheck(), verdict::MatchMode::same);
  judge.expect(expected);
  protocol::Verdict named = crash("SIGABRT");
  named.stderr_tail = "terminate called after throwing an instance of 'int'\n";
  CHECK(judge.counts(named));
  CHECK(judge.counts(raced));
  CHECK(judge.counts(exception(protocol::unknown_exception_type, "")));  // the same throw, caught
  CHECK_FALSE(judge.counts(crash("SIGSEGV")));
  CHECK_FALSE(judge.counts(exception("std::runtime_error", "boom")));
}

TEST_CASE("by default only the original's failure counts", "[failure_judge]") {
  verdict::FailureJudge judge(verdict::FailureCheck(), verdict::MatchMode::same);
  // Before the sanity check sets the signature, any failure counts.
  CHECK(judge.counts(exception("std::runtime_error", "boom")));
  judge.expect(verdict::signature_of(crash("SIGSEGV")));
  CHECK(judge.counts(crash("SIGSEGV")));
  CHECK_FALSE(judge.counts(crash("SIGABRT")));
  CHECK_FALSE(judge.counts(exception("std::runtime_error", "boom")));
  CHECK(judge.why_not(crash("SIGABRT")) == "a different failure (crash (SIGABRT), not crash (SIGSEGV))");
  CHECK_FALSE(judge.counts(protocol::Verdict::passed()));

  verdict::FailureJudge thrown(verdict::FailureCheck(), verdict::MatchMode::same);
  thrown.expect(verdict::signature_of(exception("c10::Error", "index 7 out of range")));
  CHECK(thrown.counts(exception("c10::Error", "index 2 out of range")));
  CHECK_FALSE(thrown.counts(exception("c10::Error", "division by zero")));
}

TEST_CASE("match mode any and the check-str regex", "[failure_judge]") {
  verdict::FailureJudge any(verdict::FailureCheck(), verdict::MatchMode::any);
  any.expect(verdict::signature_of(crash("SIGSEGV")));
  CHECK(any.counts(exception("std::runtime_error", "boom")));

  auto check = verdict::FailureCheck::with_check_str("boo+m");
  REQUIRE(check.has_value());
  verdict::FailureJudge checked(*check, verdict::MatchMode::any);
  CHECK(checked.counts(exception("std::runtime_error", "booom")));
  CHECK_FALSE(checked.counts(exception("std::runtime_error", "bang")));
  CHECK(checked.why_not(exception("std::runtime_error", "bang")) == "it does not match --check-str");

  CHECK(verdict::parse_match_mode("any").value() == verdict::MatchMode::any);
  CHECK(verdict::parse_match_mode("some").error().message == "unknown match mode 'some' (same, any)");
}
