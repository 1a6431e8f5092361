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
#include <iterator>
#include <utility>

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

OpenFile& OpenFile::operator=(OpenFile&& other) noexcept {
  if (this != &other) {
    if (fd >= 0) ::close(fd);
    fd = std::exchange(other.fd, -1);
  }
  return *this;
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

// What a file that is not regular is, for the error refusing it.
const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// The open file as a RegularFile: anything else refused, and so is one not of `size` bytes (when
// given), all from fstat, before a byte is read.
Expected<RegularFile> regular(OpenFile file, const std::filesystem::path& path, std::optional<std::uint64_t> size) {
  struct stat info {};
  if (::fstat(file.fd, &info) != 0) return errno_error(path.string(), errno);
  if (!S_ISREG(info.st_mode))
    return make_error(ErrorKind::invalid_input, path.string() + " is " + kind_of(info.st_mode) + ", not a regular file");
  if (size && static_cast<std::uint64_t>(info.st_size) != *size)
    return make_error(ErrorKind::corrupt, path.string() + ": holds " + std::to_string(info.st_size) +
                                              " bytes, expected " + std::to_string(*size));
  return RegularFile{std::move(file), info};
}

// A failed openat() of `name` in `dir` with O_NOFOLLOW, saying so when it failed for being a link
// (ELOOP; ENOTDIR where O_DIRECTORY was asked too).
Error open_under_error(int dir, const std::string& name, const std::filesystem::path& path, int error_number) {
  struct stat info {};
  if ((error_number == ELOOP || error_number == ENOTDIR) && ::fstatat(dir, name.c_str(), &info, AT_SYMLINK_NOFOLLOW) == 0 &&
      S_ISLNK(info.st_mode))
    return make_error(ErrorKind::invalid_input, path.string() + " is a symbolic link, which is not followed here");
  return errno_error(path.string(), error_number);
}

}  // namespace

Expected<RegularFile> open_regular_file(const std::filesystem::path& path) {
  OpenFile file{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC)};
  if (file.fd < 0) return errno_error(path.string(), errno);
  return regular(std::move(file), path, std::nullopt);
}

Expected<OpenFile> open_under(const std::filesystem::path& base, const std::filesystem::path& relative, int flags,
                              mode_t mode) {
  OpenFile dir{::open(base.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
  if (dir.fd < 0) return errno_error(base.string(), errno);
  std::filesystem::path reached = base;
  for (auto name = relative.begin(); name != relative.end(); ++name) {
    const std::string text = name->string();
    if (text.empty() || text == "." || text == ".." || text.find('/') != std::string::npos)
      return make_error(ErrorKind::invalid_input, (base / relative).string() + ": not a plain path under " + base.string());
    reached /= text;
    bool last = std::next(name) == relative.end();
    int name_flags = last ? flags : O_RDONLY | O_DIRECTORY;
    OpenFile next{::openat(dir.fd, text.c_str(), name_flags | O_NOFOLLOW | O_CLOEXEC, mode)};
    if (next.fd < 0) return open_under_error(dir.fd, text, reached, errno);
    if (last) return Expected<OpenFile>(std::move(next));
    dir = std::move(next);
  }
  return make_error(ErrorKind::invalid_input, base.string() + ": an empty path under it");
}

Expected<RegularFile> open_regular_under(const std::filesystem::path& base, const std::filesystem::path& relative,
                                         std::optional<std::uint64_t> size) {
  auto file = open_under(base, relative, O_RDONLY | O_NONBLOCK);
  if (!file) return file.error();
  return regular(std::move(*file), base / relative, size);
}

Expected<std::string> read_file(const std::filesystem::path& path) {
  auto file = open_regular_file(path);
  if (!file) return file.error();
  return read_file(*file, path);
}

Expected<std::string> read_file(const RegularFile& file, const std::filesystem::path& path) {
  // Sized by fstat and read in place; a file that grew meanwhile is read on to its end.
  std::string content(static_cast<std::size_t>(file.info.st_size), '\0');
  for (std::size_t at = 0;;) {
    auto got = read_up_to(file.file.fd, content.data() + at, content.size() - at, path);
    if (!got) return got.error();
    at += *got;
    if (at < content.size()) {
      content.resize(at);
      return content;
    }
    content.resize(content.size() + (1 << 16));
  }
}

Expected<void> read_exactly(const RegularFile& file, const std::filesystem::path& path, void* destination,
                            std::size_t size) {
  auto got = read_up_to(file.file.fd, static_cast<char*>(destination), size, path);
  if (!got) return got.error();
  if (*got != size)
    return make_error(ErrorKind::corrupt, path.string() + ": holds " + std::to_string(*got) + " bytes, expected " +
                                              std::to_string(size) + " (it shrank while read)");
  return {};
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
