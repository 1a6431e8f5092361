// --check-str with RE2: a match in time linear in a bounded text, patterns that need backtracking
// refused by name.
#include <catch2/catch.hpp>

#include <chrono>

#include "daemon/verdict/failure_check.h"
#include "daemon/verdict/query_result.h"

using namespace minifyd;

namespace {

protocol::Verdict exception(const std::string& message, const std::string& stderr_tail = {}) {
  protocol::Verdict verdict;
  verdict.pass = false;
  verdict.kind = protocol::FailureKind::exception;
  verdict.exception_type = "RuntimeError";
  verdict.message = message;
  verdict.stderr_tail = stderr_tail;
  return verdict;
}

}  // namespace

TEST_CASE("a pattern that backtracks exponentially is matched in linear time", "[failure_check]") {
  // std::regex's ECMAScript engine took minutes on this (issue 52), on minifyd's io thread.
  auto check = verdict::FailureCheck::with_check_str("(.*)*Q");
  REQUIRE(check.has_value());
  auto started = std::chrono::steady_clock::now();
  CHECK_FALSE(check->counts(exception(std::string(100'000, 'a'), std::string(100'000, 'b'))));
  CHECK(check->counts(exception(std::string(1'000, 'a') + "Q")));
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(2));
}

TEST_CASE("backreferences and lookaround are refused naming --check-str", "[failure_check]") {
  for (const char* pattern : {"(?=boom)", "(?!boom)", "(?<=x)y", "(a)\\1"}) {
    auto check = verdict::FailureCheck::with_check_str(pattern);
    REQUIRE_FALSE(check.has_value());
    CHECK(check.error().kind == ErrorKind::invalid_input);
    CHECK_THAT(check.error().message, Catch::StartsWith(std::string("--check-str '") + pattern + "'"));
    CHECK_THAT(check.error().message, Catch::Contains("backreferences and lookaround are not supported"));
  }
  CHECK_FALSE(verdict::FailureCheck::with_check_str("(unclosed").has_value());
}

TEST_CASE("the text a pattern searches is bounded whatever the worker sent", "[failure_check]") {
  protocol::Verdict huge = exception(std::string(10'000'000, 'm') + "TAIL", std::string(10'000'000, 's') + "END");
  std::string text = verdict::check_str_text(huge);
  CHECK(text.size() < 100 * 1024);
  CHECK(text.find("TAIL") == std::string::npos);  // the message's head is searched
  CHECK(text.size() >= 3);
  CHECK(text.compare(text.size() - 3, 3, "END") == 0);  // stderr's end is searched
  auto check = verdict::FailureCheck::with_check_str("RuntimeError: m+");
  REQUIRE(check.has_value());
  CHECK(check->counts(huge));
}
