// The op_libraries member: encoded and decoded here alone.
#include "protocol/operator_libraries.h"

#include <filesystem>
#include <set>

#include "common/sha256.h"

namespace minifyd::protocol {

void encode_op_libraries(const std::vector<OperatorLibrary>& libraries, nlohmann::json& message) {
  if (libraries.empty()) return;
  nlohmann::json list = nlohmann::json::array();
  for (const OperatorLibrary& library : libraries)
    list.push_back({{"namespace", library.name_space}, {"path", library.path}, {"sha256", library.sha256}});
  message[op_libraries_key] = std::move(list);
}

Expected<std::vector<OperatorLibrary>> decode_op_libraries(const JsonView& view) {
  std::vector<OperatorLibrary> libraries;
  auto member = view.optional_field(op_libraries_key);
  if (!member) return member.error();
  if (!*member) return libraries;
  std::set<std::string> namespaces;
  auto decode_one = [&](const JsonView& item) -> Expected<OperatorLibrary> {
    OperatorLibrary library;
    if (auto read = item.read("namespace", library.name_space); !read) return read.error();
    if (auto read = item.read("path", library.path); !read) return read.error();
    if (auto read = item.read("sha256", library.sha256); !read) return read.error();
    if (auto refused = library_namespace_refusal(library.name_space)) return item.error("namespace: " + *refused);
    if (!namespaces.insert(library.name_space).second)
      return item.error("namespace: '" + library.name_space + "' is named by two libraries");
    if (!std::filesystem::path(library.path).is_absolute())
      return item.error("path: " + quoted_for_message(library.path) + " is not an absolute path");
    if (!is_sha256_hex(library.sha256)) return item.error("sha256: not 64 lowercase hex digits");
    return library;
  };
  if (auto read = view.append_items(op_libraries_key, decode_one, libraries); !read) return read.error();
  return libraries;
}

}  // namespace minifyd::protocol
