// Operator libraries a job names (`--op-library NS=PATH.so`): what one is, the namespaces they add to
// the graph rule for that job, and how a library's file is opened and checked before anything loads
// it (docs/security.md, "A vendor's operators").
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.h"
#include "common/file_util.h"
#include "common/graph_targets.h"

namespace minifyd {

struct OperatorLibrary {
  std::string name_space;  // NS of the NS::op its TORCH_LIBRARY registers
  std::string path;        // absolute
  std::string sha256;      // of the file when the job was made; a worker loads only these bytes

  bool operator==(const OperatorLibrary& other) const {
    return name_space == other.name_space && path == other.path && sha256 == other.sha256;
  }
};

// NS=PATH as the command line gives it, PATH made absolute against the current directory; the
// namespace checked (library_namespace_refusal), the file not yet.
Expected<OperatorLibrary> parse_operator_library(std::string_view text);

// The libraries the command line names (NS=PATH each), each file checked by open_operator_library and
// its SHA-256 recorded; no namespace twice. Errors name the argument.
Expected<std::vector<OperatorLibrary>> recorded_operator_libraries(const std::vector<std::string>& arguments);

// The namespaces `libraries` add to the rule's.
OperatorScope operator_scope(const std::vector<OperatorLibrary>& libraries);

// A library's file, open, as checked.
struct CheckedLibraryFile {
  OpenFile file;
  std::string sha256;
};

// Opens `path` for loading: O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK (a link at its end, or a FIFO,
// is refused, not followed or waited on), then refuses, naming the path, anything but a regular file of
// this process's user that neither group nor others may write, and, with `expected_sha256`, one whose
// bytes hash otherwise (the file changed since the job recorded it). The descriptor stays open: loading
// through descriptor_path() loads the bytes hashed here, whatever the path names by then.
Expected<CheckedLibraryFile> open_operator_library(const std::filesystem::path& path,
                                                   std::optional<std::string_view> expected_sha256);

// "/proc/self/fd/N": what dlopen and torch.ops.load_library are given to load the open file itself.
std::string descriptor_path(int fd);

}  // namespace minifyd
