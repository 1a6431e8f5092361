// The code Inductor generates for the minimized graph (its output code: the wrapper module with every
// kernel's C++ or Triton source, as TORCH_COMPILE_DEBUG's output_code.py holds it) and the kernel that
// fails, where that can be known: the kernel whose compile or run raised (from the exception's path
// through the generated module), or, when the process dies, the kernel last called (the worker marks
// each call on stderr while it runs this one request). Asked of a worker once the search has
// finished; kept in the checkpoint and written as OUT/output_code/.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/expected.h"
#include "common/graph_document.h"
#include "common/json_view.h"
#include "daemon/pool/request_pool.h"
#include "daemon/verdict/evaluation_spec.h"

namespace minifyd::run {

inline constexpr const char* output_code_dir_name = "output_code";

struct GeneratedCode {
  std::vector<std::string> modules;  // in the order Inductor generated them (a forward, then a backward)
  std::string failing_kernel;        // "" when none is known
  std::string found_by;              // how the kernel was found: "traceback" or "last kernel called"
  std::string error;                 // why no code could be had (the run's result stands)
};

nlohmann::json encode(const GeneratedCode& code);
Expected<void> decode(const JsonView& view, GeneratedCode& code);

// Whether the backend generates code to show (Inductor; the AOT backends generate none).
bool generates_code(const verdict::EvaluationSpec& spec);

// The generated code of `document` under spec, from one or two requests to the pool.
GeneratedCode generated_code(const pool::PoolAccess& pool, const verdict::EvaluationSpec& spec, const GraphDocument& document,
                             const std::filesystem::path& store);

// The nodes the failing kernel of an output_code_run request was made of: from the reply's output
// code, or, when the process died, from the last kernel it marked on stderr; empty when unknown.
std::vector<std::string> failing_kernel_nodes(const pool::WorkerOutcome& outcome);

// OUT/output_code/module_N.py, one per module: the directory replaced whole, by a rename.
Expected<void> write_generated_code(const GeneratedCode& code, const std::filesystem::path& out_dir);
// report.md's section (## Generated code).
std::string render_markdown(const GeneratedCode& code);

}  // namespace minifyd::run
