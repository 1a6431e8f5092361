// Encoding of the output code a worker reports.
#include "protocol/output_code.h"

#include <algorithm>
#include <sstream>

#include "protocol/json_fields.h"

namespace minifyd::protocol {
namespace {

constexpr auto output_code_fields = [](auto& code, auto&& field) {
  field("modules", code.modules);
  field("failing_kernel", code.failing_kernel, std::string());
  field("failing_nodes", code.failing_nodes, std::vector<std::string>());
};

}  // namespace

nlohmann::json encode(const OutputCode& code) { return encode_fields(code, output_code_fields); }
Expected<void> decode(const JsonView& view, OutputCode& code) { return decode_fields(view, code, output_code_fields); }

MarkedKernel last_marked_kernel(const std::string& stderr_text) {
  MarkedKernel marked;
  std::size_t at = stderr_text.rfind(kernel_mark);
  if (at == std::string::npos) return marked;
  std::size_t begin = at + std::string(kernel_mark).size();
  std::size_t end = std::min(stderr_text.find('\n', begin), stderr_text.size());
  std::istringstream words(stderr_text.substr(begin, end - begin));
  words >> marked.name;
  for (std::string node; words >> node;) marked.nodes.push_back(node);
  return marked;
}

}  // namespace minifyd::protocol
