// What tells a file's bytes apart without reading them: its inode, its size and its change time.
// Every write to a file moves its ctime (which no one can set back), and a file renamed into its
// place is another inode, so bytes hashed once need not be hashed again while the identity holds:
// the blobs a coordinator wrote and hashed itself are vouched for to its workers by their identity.
#pragma once

#include <sys/stat.h>

#include <cstdint>

namespace minifyd {

struct FileIdentity {
  std::uint64_t device = 0;
  std::uint64_t inode = 0;
  std::uint64_t size = 0;
  std::int64_t ctime_ns = 0;

  bool operator==(const FileIdentity& other) const {
    return device == other.device && inode == other.inode && size == other.size && ctime_ns == other.ctime_ns;
  }
  bool operator!=(const FileIdentity& other) const { return !(*this == other); }
};

FileIdentity identity_of(const struct stat& info);

}  // namespace minifyd
