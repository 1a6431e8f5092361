// mmap(2) of whole files, MAP_PRIVATE, with errors naming the path.
#include "common/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "common/file_util.h"

namespace minifyd {

Expected<MappedFile> MappedFile::map(const std::filesystem::path& path, std::size_t size) {
  if (size == 0) return make_error(ErrorKind::invalid_input, path.string() + ": an empty file cannot be mapped");
  OpenFile file{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (file.fd < 0) return errno_error(path.string(), errno);
  struct stat info {};
  if (::fstat(file.fd, &info) != 0) return errno_error(path.string(), errno);
  if (static_cast<std::uint64_t>(info.st_size) != size)
    return make_error(ErrorKind::corrupt, path.string() + ": holds " + std::to_string(info.st_size) +
                                              " bytes, expected " + std::to_string(size));
  // Writable though the file is open read-only: MAP_PRIVATE's writes go to private copies of pages.
  void* data = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, file.fd, 0);
  if (data == MAP_FAILED) return errno_error("mapping " + path.string(), errno);
  return MappedFile(path, data, identity_of(info));
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : path_(std::move(other.path_)),
      data_(std::exchange(other.data_, nullptr)),
      identity_(other.identity_) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) ::munmap(data_, size());
    path_ = std::move(other.path_);
    data_ = std::exchange(other.data_, nullptr);
    identity_ = other.identity_;
  }
  return *this;
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(data_, size());
}

Expected<MappedFile> MappedFile::remap() const {
  auto mapped = map(path_, size());
  if (!mapped) return mapped.error();
  if (mapped->identity_ != identity_)
    return make_error(ErrorKind::not_found, path_.string() + ": written or replaced since it was first mapped");
  return mapped;
}

}  // namespace minifyd
