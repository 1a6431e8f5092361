// The code Inductor generated for a graph and the kernel that failed (docs/protocol.md), as the
// Python worker reports it in a verdict reply when the evaluate request asks for it.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/expected.h"
#include "common/json_view.h"

namespace minifyd::protocol {

// Request modes (EvaluateRequest::output_code): compile and run, marking each kernel call on stderr
// (a kernel that kills the process is the last one marked); or compile only, for the code.
inline constexpr const char* output_code_run = "run";
inline constexpr const char* output_code_compile = "compile";
// The line the worker writes to stderr before each kernel call of an output_code_run request.
inline constexpr const char* kernel_mark = "minifyd-kernel: ";

struct OutputCode {
  std::vector<std::string> modules;  // each generated module's source, in the order Inductor made them
  std::string failing_kernel;        // the kernel whose definition or call the failure passed through
};

nlohmann::json encode(const OutputCode& code);
Expected<void> decode(const JsonView& view, OutputCode& code);

// The kernel the last kernel_mark line of a worker's stderr names; "" when there is none.
std::string last_marked_kernel(const std::string& stderr_text);

}  // namespace minifyd::protocol
