#include "daemon/run/scratch_graph_dir.h"

#include "common/graph_codec.h"
#include "common/file_util.h"

namespace minifyd::run {

Expected<ScratchGraphDir> ScratchGraphDir::write(const GraphDocument& document, const std::filesystem::path& store,
                                                 const std::string& prefix) {
  auto created = create_unique_directory(std::filesystem::temp_directory_path(), prefix);
  if (!created) return created.error().with_context("a scratch directory");
  ScratchGraphDir scratch(*created);
  std::error_code error;
  std::filesystem::create_directory_symlink(std::filesystem::absolute(store), scratch.path_ / store_dir_name, error);
  if (error) return make_error(ErrorKind::io, "linking the store into " + scratch.path_.string() + ": " + error.message());
  if (auto written = write_graph_json(document, scratch.path_); !written) return written.error();
  return scratch;
}

ScratchGraphDir::~ScratchGraphDir() {
  if (path_.empty()) return;
  std::error_code error;
  std::filesystem::remove_all(path_, error);
}

}  // namespace minifyd::run
