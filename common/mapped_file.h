// A file's bytes mapped copy-on-write (MAP_PRIVATE): reads come straight from the page cache, with
// no copy into fresh pages, and a write stays private to the mapping, never reaching the file.
#pragma once

#include <cstddef>
#include <filesystem>

#include "common/expected.h"
#include "common/file_identity.h"

namespace minifyd {

class MappedFile {
 public:
  // Maps the whole of the regular file `relative` under `base`, reached through no symbolic link, that
  // must hold `size` (> 0) bytes (open_regular_under: anything else refused before it is mapped).
  static Expected<MappedFile> map(const std::filesystem::path& base, const std::filesystem::path& relative,
                                  std::size_t size);

  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  void* data() const { return data_; }
  std::size_t size() const { return static_cast<std::size_t>(identity_.size); }
  // The file's, as it was when mapped.
  const FileIdentity& identity() const { return identity_; }

  // A second mapping of the same file, private to itself: writes to either are not seen by the
  // other. An error when the path no longer names the file mapped here, unchanged (removed, written
  // since, or replaced by another), so the new mapping holds exactly the bytes this one was mapped from.
  Expected<MappedFile> remap() const;

 private:
  MappedFile(std::filesystem::path base, std::filesystem::path relative, void* data, FileIdentity identity)
      : base_(std::move(base)), relative_(std::move(relative)), data_(data), identity_(identity) {}

  std::filesystem::path base_;
  std::filesystem::path relative_;
  void* data_ = nullptr;
  FileIdentity identity_;  // its size is the mapping's
};

}  // namespace minifyd
