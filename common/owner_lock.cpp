// The owner lock: flock(LOCK_EX | LOCK_NB) on DIR/.owner, the owner's pid written into it.
#include "common/owner_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <utility>

#include "common/file_util.h"

namespace minifyd {
namespace {

// The pid the holder wrote, or "unknown" when it has not written it yet.
std::string holder_of(const std::filesystem::path& path) {
  auto text = read_file(path);
  if (!text || text->empty()) return "unknown";
  return text->substr(0, text->find('\n'));
}

}  // namespace

Expected<OwnerLock> OwnerLock::acquire(const std::filesystem::path& dir) {
  std::filesystem::path path = dir / owner_lock_file_name;
  int fd = ::open(path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
  if (fd < 0) return errno_error(path.string(), errno);
  OwnerLock lock(fd);
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    if (errno == EWOULDBLOCK)
      return make_error(ErrorKind::invalid_input, dir.string() + " is being written by another process (pid " +
                                                      holder_of(path) + "): wait for it to end, or choose another directory");
    return errno_error("flock " + path.string(), errno);
  }
  std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size()))
    return errno_error("writing " + path.string(), errno);
  return Expected<OwnerLock>(std::move(lock));
}

OwnerLock::~OwnerLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the descriptor releases the flock
}

}  // namespace minifyd
