// Encoding of the output code a worker reports.
#include "protocol/output_code.h"

#include "protocol/json_fields.h"

namespace minifyd::protocol {
namespace {

constexpr auto output_code_fields = [](auto& code, auto&& field) {
  field("modules", code.modules);
  field("failing_kernel", code.failing_kernel, std::string());
};

}  // namespace

nlohmann::json encode(const OutputCode& code) { return encode_fields(code, output_code_fields); }
Expected<void> decode(const JsonView& view, OutputCode& code) { return decode_fields(view, code, output_code_fields); }

std::string last_marked_kernel(const std::string& stderr_text) {
  std::size_t at = stderr_text.rfind(kernel_mark);
  if (at == std::string::npos) return "";
  std::size_t begin = at + std::string(kernel_mark).size();
  std::size_t end = stderr_text.find('\n', begin);
  return stderr_text.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

}  // namespace minifyd::protocol
