// Writing the content store's blobs: one put, a batch synced before its root, a blob linked (or copied)
// from another store.
#include "common/content_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <optional>

#include "common/file_util.h"
#include "common/sha256.h"

namespace minifyd {

namespace fs = std::filesystem;

Expected<void> ContentStore::make_fanout(std::string_view hash) const {
  fs::path fanout = blob_relative(hash).parent_path();
  auto blobs = open_under(root_, "blobs", O_RDONLY | O_DIRECTORY);
  if (!blobs) return blobs.error();
  std::string name = fanout.filename().string();
  if (::mkdirat(blobs->fd, name.c_str(), 0755) != 0 && errno != EEXIST)
    return errno_error("creating " + (root_ / fanout).string(), errno);
  auto made = open_under(root_, fanout, O_RDONLY | O_DIRECTORY);
  if (!made) return made.error();
  return {};
}

Expected<std::string> ContentStore::put(const void* data, std::size_t size) const {
  return put(data, size, FileSync::now);
}

Expected<std::string> ContentStore::put(const void* data, std::size_t size, FileSync sync) const {
  std::string hash = sha256_hex(data, size);
  fs::path path = blob_path(hash);
  if (open_blob(hash, size)) return hash;
  auto held = lock_shared();
  if (!held) return held.error();
  if (auto fanout = make_fanout(hash); !fanout) return fanout.error().with_context("storing blob " + hash);
  auto written = write_file_atomic(path, std::string_view(static_cast<const char*>(data), size), root_ / "tmp", sync);
  if (!written) return written.error().with_context("storing blob " + hash);
  return hash;
}

Expected<std::string> BlobBatch::put(const void* data, std::size_t size) {
  auto hash = store_.put(data, size, FileSync::later);
  if (hash) hashes_.push_back(*hash);
  return hash;
}

Expected<void> BlobBatch::put_from(const ContentStore& source, std::string_view hash, std::size_t size) {
  if (auto checked = source.open_blob(hash, size); !checked) return checked.error();
  auto linked = store_.link_from(source, hash, size);
  if (!linked) return linked.error();
  if (!*linked && size == 0) {  // verified as read: nothing, which has no mapping
    if (auto empty = source.get(hash, 0); !empty) return empty.error();
    if (auto put = store_.put("", 0, FileSync::later); !put) return put.error();
  } else if (!*linked) {  // copied from a verified mapping, never a buffer of the blob's size
    auto mapped = source.map(hash, size);
    if (!mapped) return mapped.error();
    if (auto put = store_.put(mapped->data(), size, FileSync::later); !put) return put.error();
  }
  hashes_.emplace_back(hash);
  return {};
}

Expected<void> BlobBatch::sync() {
  // Storages of equal bytes (a propagation's) put one blob several times: it is synced once.
  std::sort(hashes_.begin(), hashes_.end());
  hashes_.erase(std::unique(hashes_.begin(), hashes_.end()), hashes_.end());
  for (const std::string& hash : hashes_)
    if (auto synced = sync_file(store_.blob_path(hash)); !synced) return synced.error().with_context("storing blob " + hash);
  hashes_.clear();
  return {};
}

Expected<bool> ContentStore::link_from(const ContentStore& source, std::string_view hash, std::size_t size) const {
  if (!is_sha256_hex(hash)) return blob_error(ErrorKind::invalid_input, hash, "not a SHA-256 digest");
  fs::path from = source.blob_path(hash);
  fs::path to = blob_path(hash);
  if (auto fanout = make_fanout(hash); !fanout) return fanout.error();
  if (::link(from.c_str(), to.c_str()) != 0) {
    int saved = errno;
    if (saved == ENOENT) return source.read_error(errno_error(from.string(), saved), hash);
    if (saved == EEXIST && contains(hash)) return true;  // another writer put it meanwhile
    // Another file system, hard links refused (protected_hardlinks, a file system without them).
    return false;
  }
  // Checked as linked, not as named before: the name may have been given to another file meanwhile.
  // A file another user may write could change under the store's name: that one is copied.
  struct stat file {};
  bool own = ::lstat(to.c_str(), &file) == 0 && S_ISREG(file.st_mode) && file.st_uid == ::geteuid() &&
             (file.st_mode & (S_IWGRP | S_IWOTH)) == 0 && size > 0;
  std::optional<Error> refused;
  if (own) {
    auto verified = map(hash, size);
    if (verified) return true;
    refused = verified.error();
  }
  if (::unlink(to.c_str()) != 0 && errno != ENOENT) return errno_error("unlinking " + to.string(), errno);
  if (refused) return *refused;
  return false;
}

}  // namespace minifyd
