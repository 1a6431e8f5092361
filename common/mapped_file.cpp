// mmap(2) of whole files, MAP_PRIVATE, with errors naming the path.
#include "common/mapped_file.h"

#include <sys/mman.h>

#include <cerrno>
#include <utility>

#include "common/file_util.h"

namespace minifyd {

Expected<MappedFile> MappedFile::map(const std::filesystem::path& base, const std::filesystem::path& relative,
                                     std::size_t size) {
  std::filesystem::path path = base / relative;
  if (size == 0) return make_error(ErrorKind::invalid_input, path.string() + ": an empty file cannot be mapped");
  auto file = open_regular_under(base, relative, size);
  if (!file) return file.error();
  // Writable though the file is open read-only: MAP_PRIVATE's writes go to private copies of pages.
  void* data = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, file->file.fd, 0);
  if (data == MAP_FAILED) return errno_error("mapping " + path.string(), errno);
  return MappedFile(base, relative, data, identity_of(file->info));
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : base_(std::move(other.base_)),
      relative_(std::move(other.relative_)),
      data_(std::exchange(other.data_, nullptr)),
      identity_(other.identity_) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) ::munmap(data_, size());
    base_ = std::move(other.base_);
    relative_ = std::move(other.relative_);
    data_ = std::exchange(other.data_, nullptr);
    identity_ = other.identity_;
  }
  return *this;
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(data_, size());
}

Expected<MappedFile> MappedFile::remap() const {
  auto mapped = map(base_, relative_, size());
  if (!mapped) return mapped.error();
  if (mapped->identity_ != identity_)
    return make_error(ErrorKind::not_found, (base_ / relative_).string() + ": written or replaced since it was first mapped");
  return mapped;
}

}  // namespace minifyd
