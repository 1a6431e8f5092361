// Failure signatures and message normalisation.
#include "daemon/verdict/failure_signature.h"

#include <array>
#include <cctype>

#include "protocol/json_fields.h"

namespace minifyd::verdict {
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

// Prefixes of the numbered names Inductor generates (buffers, temporaries, operations, loop index
// and size symbols): a word of one of them followed by digits only is such a name.
constexpr std::array<std::string_view, 9> generated_prefixes = {"buf", "tmp", "op", "x", "y", "s", "ks", "u", "r"};
// Prefixes of Inductor's kernel names (C++ and Triton): the rest of the name lists the fused
// operators and a counter, both of which shrinking changes.
constexpr std::array<std::string_view, 5> kernel_prefixes = {"cpp_fused_", "triton_poi_", "triton_red_",
                                                             "triton_per_", "triton_tem_"};

bool all_digits(std::string_view text) {
  if (text.empty()) return false;
  for (char c : text)
    if (!is_digit(c)) return false;
  return true;
}

// A word of the message (letters, digits, underscores, not starting with a digit) with its
// generated numbering replaced, or as it is.
std::string normalise_word(std::string_view word) {
  for (auto prefix : kernel_prefixes)
    if (word.substr(0, prefix.size()) == prefix) return "<kernel>";
  for (auto prefix : generated_prefixes)
    if (word.size() > prefix.size() && word.substr(0, prefix.size()) == prefix &&
        all_digits(word.substr(prefix.size())))
      return std::string(prefix) + "N";
  // AOT's inputs (arg3_1) and FX's node names (sin_19, getitem_4): every `_digits` part counts.
  std::string normalised;
  std::size_t start = 0;
  while (start < word.size()) {
    std::size_t end = word.find('_', start + 1);
    std::string_view part = word.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    bool numbered = part.size() > 1 && part[0] == '_' && all_digits(part.substr(1));
    if (start == 0 && word.substr(0, 3) == "arg" && all_digits(part.substr(3))) part = "argN";
    normalised += numbered ? std::string_view("_N") : part;
    if (end == std::string_view::npos) break;
    start = end;
  }
  return normalised;
}

// The extensions of the files a compiler generates (Inductor's C++, Python and shared objects, Triton's
// stages): a path ending in one is a generated file's, whose name holds a cache key.
constexpr std::array<std::string_view, 10> generated_extensions = {".cpp", ".h",  ".hpp",  ".py",    ".so",
                                                                   ".cu",  ".ptx", ".ttir", ".ttgir", ".llir"};
// A path's characters after its first '/': anything but white space, colons, quotes and parentheses.
bool in_path(char c) {
  return std::isspace(static_cast<unsigned char>(c)) == 0 && c != ':' && c != '\'' && c != '"' && c != '(' && c != ')';
}
// Inductor's base32 cache keys and other hashes: a word of 32 or more lower-case letters and digits.
constexpr std::size_t hash_length = 32;

// The length of the generated file's path at message[i] (a '/'), with the :line:column numbers after
// it, or 0 where no path of a generated file starts there: the longest run of path characters that
// ends in one of generated_extensions.
std::size_t generated_path_length(std::string_view message, std::size_t i) {
  std::size_t end = i;
  while (end < message.size() && (message[end] == '/' || in_path(message[end]))) ++end;
  for (std::size_t stop = end; stop > i + 1; --stop) {
    std::string_view path = message.substr(i, stop - i);
    bool generated = false;
    for (auto extension : generated_extensions)
      generated = generated || (path.size() > extension.size() + 1 &&
                                path.substr(path.size() - extension.size()) == extension &&
                                path[path.size() - extension.size() - 1] != '/');
    if (!generated) continue;
    std::size_t length = stop - i;
    while (i + length + 1 < message.size() && message[i + length] == ':' && is_digit(message[i + length + 1])) {
      ++length;
      while (i + length < message.size() && is_digit(message[i + length])) ++length;
    }
    return length;
  }
  return 0;
}

bool is_hash(std::string_view word) {
  if (word.size() < hash_length) return false;
  for (char c : word)
    if (!is_digit(c) && (c < 'a' || c > 'z')) return false;
  return true;
}

bool aborts(const FailureSignature& signature) {
  return signature.kind == protocol::FailureKind::crash && signature.signal == "SIGABRT";
}

constexpr auto signature_fields = [](auto& signature, auto&& field) {
  field("kind", signature.kind);
  field("signal", signature.signal);
  field("exception_type", signature.exception_type);
  field("message", signature.message);
  // Absent from the signatures of checkpoints and jobs written before the raising frame was known.
  field("raised_at", signature.raised_at, std::string());
};

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
    std::size_t word_end = i;
    while (word_end < message.size() && is_word(message[word_end])) ++word_end;
    if (message[i] == '/') {
      if (std::size_t path = generated_path_length(message, i); path > 0) {
        normalised += "<generated>";
        i += path;
        continue;
      }
    }
    if (starts_word && is_hash(message.substr(i, word_end - i))) {
      normalised += "<hash>";
      i = word_end;
    } else if (starts_word && message.compare(i, 2, "0x") == 0 && i + 2 < message.size() && is_hex_digit(message[i + 2])) {
      i += 2;
      while (i < message.size() && is_hex_digit(message[i])) ++i;
      normalised += "N";
    } else if (starts_word && is_digit(message[i])) {
      while (i < message.size() && (is_digit(message[i]) || message[i] == '.')) ++i;
      normalised += "N";
    } else if (starts_word && is_word(message[i])) {
      normalised += normalise_word(message.substr(i, word_end - i));
      i = word_end;
    } else {
      normalised += message[i++];
    }
  }
  while (!normalised.empty() && std::isspace(static_cast<unsigned char>(normalised.back()))) normalised.pop_back();
  normalised.erase(0, normalised.find_first_not_of(" \t"));
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
    signature.raised_at = failing.raised_at;
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
  if (!signature.raised_at.empty()) text += " raised at " + signature.raised_at;
  if (!signature.message.empty()) text += ": " + signature.message;
  return text;
}

nlohmann::json encode(const FailureSignature& signature) { return protocol::encode_fields(signature, signature_fields); }

Expected<void> decode(const JsonView& view, FailureSignature& signature) {
  return protocol::decode_fields(view, signature, signature_fields);
}

}  // namespace minifyd::verdict
