// The one process that writes a directory (`minify run`'s --out, `minify result`'s --out): an
// exclusive flock() on DIR/.owner, which names the owner's pid. A second writer is refused at once,
// naming the owner; the kernel drops a dead owner's lock with its descriptor, so the next writer takes
// it over without anyone cleaning up.
#pragma once

#include <filesystem>

#include "common/expected.h"

namespace minifyd {

inline constexpr const char* owner_lock_file_name = ".owner";

class OwnerLock {
 public:
  // Takes dir's lock (dir must exist). Errors: invalid_input when another process holds it ("DIR is
  // being written by another process (pid N)"), when dir is not the running user's own, or when
  // DIR/.owner is a symbolic link (never followed); io when the lock file cannot be opened or written.
  static Expected<OwnerLock> acquire(const std::filesystem::path& dir);

  OwnerLock(OwnerLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  OwnerLock& operator=(OwnerLock&&) = delete;
  ~OwnerLock();

 private:
  explicit OwnerLock(int fd) : fd_(fd) {}
  int fd_;
};

}  // namespace minifyd
