// A failure's signature (BRIEF "Verdicts"): what must stay the same for a candidate to count as the
// same bug as the original, so that the search cannot slip onto a different one.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "common/expected.h"
#include "common/json_view.h"
#include "protocol/verdict.h"

namespace minifyd::verdict {

struct FailureSignature {
  protocol::FailureKind kind = protocol::FailureKind::exception;
  std::string signal;          // crash only
  std::string exception_type;  // exception only
  std::string raised_at;       // exception only: the compiler's raising frame, when the worker tells it
  std::string message;         // exception only, normalised

  bool operator==(const FailureSignature& other) const {
    return kind == other.kind && signal == other.signal && exception_type == other.exception_type &&
           raised_at == other.raised_at && message == other.message;
  }
  bool operator!=(const FailureSignature& other) const { return !(*this == other); }
};

// The message of the one signature that a C++ exception not derived from std::exception has,
// whether std::terminate aborted the process on it or a catch (...) turned it into an exception:
// "crash (SIGABRT): C++ exception not derived from std::exception".
inline constexpr std::string_view non_std_cpp_exception = "C++ exception not derived from std::exception";

// The signature of a failing verdict. Accuracy, nan and timeout failures are one bug each per kind:
// their figures change with every candidate.
FailureSignature signature_of(const protocol::Verdict& failing);

// The message of an abort's signature whose report names no exception. When two threads'
// exceptions escape at once (an injected throw in each thread of an OpenMP loop), libstdc++ may
// report only the second's "terminate called recursively" and abort before the first names its
// exception; which thread wins is a race.
inline constexpr std::string_view lost_exception = "exception lost to a second std::terminate";

// Whether `failing` shows the failure whose signature is `expected`: their signatures are equal, or
// both are aborts and either lost its exception (the original's abort may lose it as well as a
// candidate's), since which exception it was is then unknown.
bool shows(const protocol::Verdict& failing, const FailureSignature& expected);

// An exception message reduced to what survives shrinking the graph and compiling it again: its first
// line (c10::Error appends a C++ backtrace), trimmed, with the paths of the files a compiler generated
// (Inductor's cache, a temporary directory: any path ending in .cpp, .h, .hpp, .py, .so, .cu, .ptx,
// .ttir, .ttgir or .llir) and their :line:column numbers replaced by <generated>, hashes (a word of 32
// or more lower-case letters and digits: Inductor's cache keys) by <hash>, numbers and addresses (sizes, indices, pointers) replaced by N and
// the names a compiler generates, which shrinking renumbers, by their pattern: Inductor's buffers,
// temporaries, operations, index and size symbols (buf12, tmp3, op7, x0, s1, ks0 become bufN, tmpN,
// opN, xN, sN, ksN), its kernels (cpp_fused_add_sin_3, triton_poi_fused_relu_0 become <kernel>),
// AOT inputs (arg3_1: argN_N) and FX node names with a numeric suffix (sin_19, primals_4: sin_N,
// primals_N). Digits inside other names (conv2d, float16, int64) are part of the name.
std::string normalise_message(std::string_view message);

// "crash (SIGSEGV)", "exception c10::Error: shape mismatch N vs N",
// "exception KeyError raised at torch/_inductor/loop_body.py:get_read_expr: 'bufN'".
std::string describe(const FailureSignature& signature);

nlohmann::json encode(const FailureSignature& signature);
Expected<void> decode(const JsonView& view, FailureSignature& signature);

}  // namespace minifyd::verdict
