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

Error errno_error(const std::string& what, int error_number) {
  if (error_number == ENOSPC || error_number == EDQUOT)
    return make_error(ErrorKind::no_space, what + ": " + std::strerror(error_number) + " (the disk is full)");
  return make_error(error_number == ENOENT ? ErrorKind::not_found : ErrorKind::io,
                    what + ": " + std::strerror(error_number));
}

Expected<std::string> read_file(const std::filesystem::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno_error(path.string(), errno);
  std::string content;
  char buffer[1 << 16];
  while (true) {
    ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got < 0) {
      if (errno == EINTR) continue;
      int saved = errno;
      ::close(fd);
      return errno_error(path.string(), saved);
    }
    if (got == 0) break;
    content.append(buffer, static_cast<std::size_t>(got));
  }
  ::close(fd);
  return content;
}

Expected<void> write_file_atomic(const std::filesystem::path& path, std::string_view data,
                                 const std::filesystem::path& temp_dir) {
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
  if (::fsync(fd) != 0) return fail("fsync " + temp);
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

Expected<std::filesystem::path> create_unique_directory(const std::filesystem::path& parent, const std::string& prefix) {
  std::string pattern = (parent / (prefix + "XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr) return errno_error("creating a directory like " + pattern, errno);
  return std::filesystem::path(pattern);
}

}  // namespace minifyd
