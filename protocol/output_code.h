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
// The line the worker writes to stderr before each kernel call of an output_code_run request: the
// kernel's name, then the nodes fused into it, separated by spaces.
inline constexpr const char* kernel_mark = "minifyd-kernel: ";

struct OutputCode {
  std::vector<std::string> modules;  // each generated module's source, in the order Inductor made them
  std::string failing_kernel;        // the kernel whose definition or call the failure passed through
  // The nodes of the graph Inductor lowered that were fused into the failing kernel (its origins), by
  // name; empty when no kernel failed or its origins are unknown.
  std::vector<std::string> failing_nodes;
};

// A kernel named by a kernel_mark line.
struct MarkedKernel {
  std::string name;  // "" when there is no such line
  std::vector<std::string> nodes;
};

nlohmann::json encode(const OutputCode& code);
Expected<void> decode(const JsonView& view, OutputCode& code);

// The kernel the last kernel_mark line of a worker's stderr names.
MarkedKernel last_marked_kernel(const std::string& stderr_text);

}  // namespace minifyd::protocol
