// The minimized graph's generated code.
#include "daemon/run/generated_code.h"

#include "common/file_util.h"
#include "daemon/pool/request_batch.h"
#include "daemon/verdict/verdict_of_outcome.h"
#include "protocol/json_fields.h"
#include "protocol/output_code.h"

namespace minifyd::run {
namespace {

constexpr auto generated_code_fields = [](auto& code, auto&& field) {
  field("modules", code.modules);
  field("failing_kernel", code.failing_kernel, std::string());
  field("found_by", code.found_by, std::string());
  field("error", code.error, std::string());
};

// The output code a reply carries, or why there is none.
Expected<protocol::OutputCode> output_code_of(const pool::WorkerOutcome& outcome) {
  if (auto* reply = std::get_if<protocol::WorkerReply>(&outcome)) {
    if (auto* evaluated = std::get_if<protocol::EvaluateReply>(reply); evaluated && evaluated->output_code)
      return *evaluated->output_code;
    if (auto* refused = std::get_if<protocol::ErrorReply>(reply)) return make_error(ErrorKind::invalid_input, refused->message);
  }
  auto verdict = verdict::verdict_of(outcome);
  if (!verdict) return verdict.error();
  return make_error(ErrorKind::io, "the worker reported no code");
}

std::string module_file_name(std::size_t index) { return "module_" + std::to_string(index) + ".py"; }

}  // namespace

nlohmann::json encode(const GeneratedCode& code) { return protocol::encode_fields(code, generated_code_fields); }
Expected<void> decode(const JsonView& view, GeneratedCode& code) {
  return protocol::decode_fields(view, code, generated_code_fields);
}

bool generates_code(const verdict::EvaluationSpec& spec) { return spec.backend == "inductor"; }

GeneratedCode generated_code(const pool::PoolAccess& pool, const verdict::EvaluationSpec& spec, const GraphDocument& document,
                             const std::filesystem::path& store) {
  GeneratedCode code;
  pool::RequestBatch batch(pool);
  protocol::EvaluateRequest request = verdict::evaluate_request(spec, document, store);
  request.output_code = protocol::output_code_run;
  pool::WorkerOutcome ran = batch.ask(request, spec.timeout);
  auto reported = output_code_of(ran);
  if (reported) {
    code.modules = std::move(reported->modules);
    code.failing_kernel = reported->failing_kernel;
    if (!code.failing_kernel.empty()) code.found_by = "traceback";
    return code;
  }
  // The run ended the process (a crash, a timeout): the kernel it last called, and the code from a compile alone.
  if (auto verdict = verdict::verdict_of(ran); verdict && !verdict->pass) {
    code.failing_kernel = protocol::last_marked_kernel(verdict->stderr_tail).name;
    if (!code.failing_kernel.empty()) code.found_by = "last kernel called";
  }
  request.output_code = protocol::output_code_compile;
  auto compiled = output_code_of(batch.ask(request, spec.timeout));
  if (!compiled) {
    code.error = compiled.error().message;
    return code;
  }
  code.modules = std::move(compiled->modules);
  return code;
}

std::vector<std::string> failing_kernel_nodes(const pool::WorkerOutcome& outcome) {
  if (auto reported = output_code_of(outcome)) return reported->failing_nodes;
  auto verdict = verdict::verdict_of(outcome);
  if (!verdict || verdict->pass) return {};
  return protocol::last_marked_kernel(verdict->stderr_tail).nodes;
}

Expected<void> write_generated_code(const GeneratedCode& code, const std::filesystem::path& out_dir) {
  // Written beside, then renamed over the last one: a run killed midway leaves no half of the modules.
  std::filesystem::path dir = out_dir / output_code_dir_name;
  std::filesystem::path partial = out_dir / (std::string(output_code_dir_name) + ".partial");
  std::error_code error;
  for (const auto& stale : {partial, dir}) {
    std::filesystem::remove_all(stale, error);
    if (error) return make_error(ErrorKind::io, "removing " + stale.string() + ": " + error.message());
  }
  if (code.modules.empty()) return {};
  std::filesystem::create_directories(partial, error);
  if (error) return make_error(ErrorKind::io, "creating " + partial.string() + ": " + error.message());
  for (std::size_t i = 0; i < code.modules.size(); ++i)
    if (auto written = write_file_atomic(partial / module_file_name(i), code.modules[i]); !written)
      return written.error();
  std::filesystem::rename(partial, dir, error);
  if (error) return make_error(ErrorKind::io, "renaming " + partial.string() + ": " + error.message());
  return {};
}

std::string render_markdown(const GeneratedCode& code) {
  std::string text = "## Generated code\n\n";
  if (!code.error.empty()) return text + "Inductor's code for the minimized graph could not be had: " + code.error + "\n";
  if (code.modules.empty()) return text + "Inductor generated no module for the minimized graph.\n";
  text += "Inductor's output code for the minimized graph (the wrapper and every kernel's source):";
  for (std::size_t i = 0; i < code.modules.size(); ++i)
    text += " `" + std::string(output_code_dir_name) + "/" + module_file_name(i) + "`";
  text += ".\n\n";
  if (code.failing_kernel.empty())
    text += "No kernel is named as failing: the failure passed through no kernel's compile or call (a wrong value, "
            "or an error before code generation).\n";
  else
    text += "The failing kernel: **`" + code.failing_kernel + "`** (" + code.found_by + ").\n";
  return text;
}

}  // namespace minifyd::run
