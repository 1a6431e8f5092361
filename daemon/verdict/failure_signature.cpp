// Failure signatures and message normalisation.
#include "daemon/verdict/failure_signature.h"

#include <cctype>

namespace minifyd {
namespace {

bool is_hex_digit(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }
bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }
bool is_word(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

// libstdc++'s std::terminate handler names an uncaught exception so; one derived from std::exception
// gets a "  what():  ..." line after it.
constexpr std::string_view terminate_line = "terminate called after throwing an instance of '";
// What libstdc++'s std::terminate handler says when it is entered again, by a second thread.
constexpr std::string_view terminate_recursively = "terminate called recursively";
// What Inductor's generated Python bindings raise for a C++ exception their catch (...) caught.
constexpr std::string_view inductor_catch_all = "unhandled error";

// Whether the verdict is a C++ exception not derived from std::exception, caught or not. Where it
// escaped a region nothing catches (an OpenMP parallel loop of Inductor's generated C++, a worker
// thread), std::terminate aborted the process; where it was caught (Inductor's bindings when the
// loop ran serially, minify-worker's catch (...)), it is an exception that has lost its type.
// Which one a candidate shows depends on whether the kernel ran in parallel, that is on the
// candidate's tensor sizes, not on the bug.
bool is_non_std_cpp_exception(const protocol::Verdict& verdict) {
  using protocol::FailureKind;
  if (verdict.kind == FailureKind::crash) {
    auto thrown = verdict.stderr_tail.rfind(terminate_line);
    if (verdict.signal != "SIGABRT" || thrown == std::string::npos) return false;
    auto next_line = verdict.stderr_tail.find('\n', thrown);
    return next_line == std::string::npos || verdict.stderr_tail.compare(next_line + 1, 9, "  what():") != 0;
  }
  return verdict.kind == FailureKind::exception &&
         (verdict.exception_type == protocol::unknown_exception_type ||
          (verdict.exception_type == "RuntimeError" && normalise_message(verdict.message) == inductor_catch_all));
}

// An abort whose report names no exception, only the second entry into std::terminate.
bool lost_its_exception(const protocol::Verdict& verdict) {
  return verdict.kind == protocol::FailureKind::crash && verdict.signal == "SIGABRT" &&
         verdict.stderr_tail.find(terminate_recursively) != std::string::npos &&
         verdict.stderr_tail.find(terminate_line) == std::string::npos;
}

bool aborts(const FailureSignature& signature) {
  return signature.kind == protocol::FailureKind::crash && signature.signal == "SIGABRT";
}

}  // namespace

bool shows(const protocol::Verdict& failing, const FailureSignature& expected) {
  FailureSignature actual = signature_of(failing);
  if (actual == expected) return true;
  return aborts(actual) && aborts(expected) && (actual.message == lost_exception || expected.message == lost_exception);
}

std::string normalise_message(std::string_view message) {
  message = message.substr(0, message.find('\n'));
  std::string normalised;
  for (std::size_t i = 0; i < message.size();) {
    bool starts_word = i == 0 || !is_word(message[i - 1]);
    if (starts_word && message.compare(i, 2, "0x") == 0 && i + 2 < message.size() && is_hex_digit(message[i + 2])) {
      i += 2;
      while (i < message.size() && is_hex_digit(message[i])) ++i;
      normalised += "N";
    } else if (starts_word && is_digit(message[i])) {
      // Numbers only: digits inside a name (conv2d, sin_19, float16) are part of the name.
      while (i < message.size() && (is_digit(message[i]) || message[i] == '.')) ++i;
      normalised += "N";
    } else {
      normalised += message[i++];
    }
  }
  while (!normalised.empty() && std::isspace(static_cast<unsigned char>(normalised.back()))) normalised.pop_back();
  return normalised;
}

FailureSignature signature_of(const protocol::Verdict& failing) {
  FailureSignature signature;
  if (is_non_std_cpp_exception(failing)) {
    signature.kind = protocol::FailureKind::crash;
    signature.signal = "SIGABRT";
    signature.message = std::string(non_std_cpp_exception);
    return signature;
  }
  signature.kind = failing.kind;
  if (failing.kind == protocol::FailureKind::crash) signature.signal = failing.signal;
  if (lost_its_exception(failing)) signature.message = std::string(lost_exception);
  if (failing.kind == protocol::FailureKind::exception) {
    signature.exception_type = failing.exception_type;
    signature.message = normalise_message(failing.message);
  }
  // An illegal address and a device-side assert are different bugs; the C++ type of CUDA's error
  // differs between PyTorch versions, its message does not.
  if (failing.kind == protocol::FailureKind::cuda_error) signature.message = normalise_message(failing.message);
  return signature;
}

std::string describe(const FailureSignature& signature) {
  std::string text = protocol::to_string(signature.kind);
  if (!signature.signal.empty()) text += " (" + signature.signal + ")";
  if (!signature.exception_type.empty()) text += " " + signature.exception_type;
  if (!signature.message.empty()) text += ": " + signature.message;
  return text;
}

nlohmann::json encode(const FailureSignature& signature) {
  return {{"kind", protocol::to_string(signature.kind)},
          {"signal", signature.signal},
          {"exception_type", signature.exception_type},
          {"message", signature.message}};
}

Expected<FailureSignature> decode_failure_signature(const JsonView& view) {
  FailureSignature signature;
  std::string kind;
  if (auto read = view.read("kind", kind); !read) return read.error();
  auto parsed = protocol::parse_failure_kind(kind);
  if (!parsed) return view.error("kind: unknown failure kind '" + kind + "'");
  signature.kind = *parsed;
  for (auto [key, target] : {std::pair{"signal", &signature.signal},
                             std::pair{"exception_type", &signature.exception_type},
                             std::pair{"message", &signature.message}})
    if (auto read = view.read(key, *target); !read) return read.error();
  return signature;
}

}  // namespace minifyd
