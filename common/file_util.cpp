// POSIX file I/O behind value-returning helpers.
#include "common/file_util.h"

#include <fcntl.h>
#include <linux/close_range.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace minifyd {

void close_descriptors_on_exec() {
  if (::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) == 0) return;
  struct rlimit files {};
  ::getrlimit(RLIMIT_NOFILE, &files);
  for (rlim_t fd = 3; fd < files.rlim_cur; ++fd) ::fcntl(static_cast<int>(fd), F_SETFD, FD_CLOEXEC);
}

OpenFile::~OpenFile() {
  if (fd >= 0) ::close(fd);
}

Error errno_error(const std::string& what, int error_number) {
  if (error_number == ENOSPC || error_number == EDQUOT)
    return make_error(ErrorKind::no_space, what + ": " + std::strerror(error_number) + " (the disk is full)");
  return make_error(error_number == ENOENT ? ErrorKind::not_found : ErrorKind::io,
                    what + ": " + std::strerror(error_number));
}

namespace {

// Reads up to `size` bytes at `destination`, stopping early at the end of the file; returns how many.
Expected<std::size_t> read_up_to(int fd, char* destination, std::size_t size, const std::filesystem::path& path) {
  std::size_t done = 0;
  while (done < size) {
    ssize_t got = ::read(fd, destination + done, size - done);
    if (got < 0) {
      if (errno == EINTR) continue;
      return errno_error(path.string(), errno);
    }
    if (got == 0) break;
    done += static_cast<std::size_t>(got);
  }
  return done;
}

Expected<std::uint64_t> size_of(int fd, const std::filesystem::path& path) {
  struct stat info {};
  if (::fstat(fd, &info) != 0) return errno_error(path.string(), errno);
  return static_cast<std::uint64_t>(info.st_size);
}

}  // namespace

Expected<std::string> read_file(const std::filesystem::path& path) {
  OpenFile file{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (file.fd < 0) return errno_error(path.string(), errno);
  auto size = size_of(file.fd, path);
  if (!size) return size.error();
  // Sized by fstat and read in place; a file that grew meanwhile is read on to its end.
  std::string content(static_cast<std::size_t>(*size), '\0');
  for (std::size_t at = 0;;) {
    auto got = read_up_to(file.fd, content.data() + at, content.size() - at, path);
    if (!got) return got.error();
    at += *got;
    if (at < content.size()) {
      content.resize(at);
      return content;
    }
    content.resize(content.size() + (1 << 16));
  }
}

Expected<std::uint64_t> read_file_into(const std::filesystem::path& path, void* destination, std::size_t size) {
  OpenFile file{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (file.fd < 0) return errno_error(path.string(), errno);
  auto file_size = size_of(file.fd, path);
  if (!file_size || *file_size != size) return file_size;
  auto got = read_up_to(file.fd, static_cast<char*>(destination), size, path);
  if (!got) return got.error();
  return static_cast<std::uint64_t>(*got);
}

Expected<void> write_file_atomic(const std::filesystem::path& path, std::string_view data,
                                 const std::filesystem::path& temp_dir, FileSync sync) {
  std::filesystem::path dir = temp_dir.empty() ? path.parent_path() : temp_dir;
  if (dir.empty()) dir = ".";
  std::string temp = (dir / ("." + path.filename().string() + ".XXXXXX")).string();
  int fd = ::mkostemp(temp.data(), O_CLOEXEC);
  if (fd < 0) return errno_error("creating a temp file in " + dir.string(), errno);
  auto fail = [&](const std::string& what) {
    int saved = errno;
    ::close(fd);
    ::unlink(temp.c_str());
    return errno_error(what, saved);
  };
  std::size_t written = 0;
  while (written < data.size()) {
    ssize_t put = ::write(fd, data.data() + written, data.size() - written);
    if (put < 0) {
      if (errno == EINTR) continue;
      return fail("writing " + temp);
    }
    written += static_cast<std::size_t>(put);
  }
  if (::fchmod(fd, 0644) != 0) return fail("chmod " + temp);
  if (sync == FileSync::now && ::fsync(fd) != 0) return fail("fsync " + temp);
  if (::close(fd) != 0) {
    int saved = errno;
    ::unlink(temp.c_str());
    return errno_error("closing " + temp, saved);
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    int saved = errno;
    ::unlink(temp.c_str());
    return errno_error("renaming " + temp + " to " + path.string(), saved);
  }
  return {};
}

Expected<void> sync_file(const std::filesystem::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno_error("opening " + path.string() + " to sync it", errno);
  if (::fsync(fd) != 0) {
    int saved = errno;
    ::close(fd);
    return errno_error("fsync " + path.string(), saved);
  }
  ::close(fd);
  return {};
}

Expected<std::filesystem::path> create_unique_directory(const std::filesystem::path& parent, const std::string& prefix) {
  std::string pattern = (parent / (prefix + "XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr) return errno_error("creating a directory like " + pattern, errno);
  return std::filesystem::path(pattern);
}

}  // namespace minifyd
