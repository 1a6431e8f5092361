// The owner lock: flock(LOCK_EX | LOCK_NB) on DIR/.owner, the owner's pid written into it.
#include "common/owner_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <utility>

#include "common/file_util.h"

namespace minifyd {
namespace {

// The pid the holder wrote, or "unknown" when it has not written it yet.
std::string holder_of(int fd) {
  char text[32] = {};
  ssize_t got = ::pread(fd, text, sizeof text - 1, 0);
  if (got <= 0) return "unknown";
  std::string pid(text, static_cast<std::size_t>(got));
  return pid.substr(0, pid.find('\n'));
}

// Only the running user's own directory is written: another's could hold what they planted there
// (a link named .owner, a store whose tmp/ leads into their victim's files).
Expected<void> check_owned(const std::filesystem::path& dir) {
  struct stat info {};
  if (::stat(dir.c_str(), &info) != 0) return errno_error(dir.string(), errno);
  if (info.st_uid != ::geteuid())
    return make_error(ErrorKind::invalid_input, dir.string() + " belongs to uid " + std::to_string(info.st_uid) +
                                                    ", not to this user (uid " + std::to_string(::geteuid()) +
                                                    "): choose a directory of your own");
  return {};
}

}  // namespace

Expected<OwnerLock> OwnerLock::acquire(const std::filesystem::path& dir) {
  if (auto owned = check_owned(dir); !owned) return owned.error();
  std::filesystem::path path = dir / owner_lock_file_name;
  // O_NOFOLLOW (open_under): a link planted as .owner is refused, its target never truncated.
  auto opened = open_under(dir, owner_lock_file_name, O_CREAT | O_RDWR, 0644);
  if (!opened) return opened.error();
  int fd = std::exchange(opened->fd, -1);
  OwnerLock lock(fd);
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    if (errno == EWOULDBLOCK)
      return make_error(ErrorKind::invalid_input, dir.string() + " is being written by another process (pid " +
                                                      holder_of(fd) + "): wait for it to end, or choose another directory");
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
