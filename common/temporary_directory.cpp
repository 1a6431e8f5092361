// Scratch directories.
#include "common/temporary_directory.h"

#include "common/file_util.h"

namespace minifyd {

Expected<TemporaryDirectory> TemporaryDirectory::create(const std::string& prefix) {
  auto created = create_unique_directory(std::filesystem::temp_directory_path(), prefix + "-");
  if (!created) return created.error();
  return TemporaryDirectory(std::move(*created));
}

TemporaryDirectory::~TemporaryDirectory() {
  if (path_.empty()) return;
  std::error_code ignored;  // a directory that cannot be removed is left in the temporary directory
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace minifyd
