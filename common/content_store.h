// The content store (docs/graph-format.md): blobs named by the SHA-256 of their bytes, written
// atomically, verified on read, kept alive by named roots, garbage-collected under an exclusive lock.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.h"
#include "common/file_util.h"
#include "common/mapped_file.h"

namespace minifyd {

inline constexpr std::string_view store_version_text = "minifyd-store 1\n";

// An flock() on store/lock, released on destruction. Writers hold it shared from their first
// blob until their root is written; gc holds it exclusive. Movable, not copyable.
class StoreLock {
 public:
  StoreLock(StoreLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  StoreLock& operator=(StoreLock&&) = delete;
  ~StoreLock();

 private:
  friend class ContentStore;
  explicit StoreLock(int fd) : fd_(fd) {}
  int fd_;
};

struct StoreStats {
  std::uint64_t blobs = 0;
  std::uint64_t bytes = 0;
  std::uint64_t roots = 0;
  std::uint64_t referenced_blobs = 0;  // distinct blobs named by some root and present
  std::uint64_t missing_blobs = 0;     // named by some root but absent
};

struct VerifyReport {
  std::uint64_t blobs_checked = 0;
  std::vector<std::string> problems;  // each names the blob hash or root and what is wrong
};

struct GcReport {
  std::uint64_t blobs_removed = 0;
  std::uint64_t bytes_removed = 0;
  std::uint64_t blobs_kept = 0;
  std::uint64_t temp_files_removed = 0;
};

// Safe to use from several processes and threads at once; each call is independent. No symbolic
// link inside the store is followed (blobs/, blobs/XX/, a blob, tmp/, roots/, a root, VERSION, lock):
// one planted there is refused naming its path, so the store never reads, writes or deletes elsewhere.
class ContentStore {
 public:
  // Opens the store at `root`. With create, makes the layout if absent. Refuses a directory that
  // is not a store or has another format version, and one whose layout holds a symbolic link.
  static Expected<ContentStore> open(const std::filesystem::path& root, bool create);

  const std::filesystem::path& root() const { return root_; }
  std::filesystem::path blob_path(std::string_view hash) const;

  Expected<StoreLock> lock_shared() const;
  Expected<StoreLock> lock_exclusive() const;

  // Stores the bytes (if not already present) and returns their hash. Takes the lock shared for
  // the duration; hold lock_shared() around put()s and write_root() to keep gc out in between.
  Expected<std::string> put(const void* data, std::size_t size) const;
  bool contains(std::string_view hash) const;
  // Reads and verifies a blob of exactly `size` bytes: missing, truncated, corrupted, oversized blobs
  // and ones that are not regular files are errors naming the hash, the size refused before reading.
  Expected<std::string> get(std::string_view hash, std::size_t size) const;
  // Reads and verifies a blob of exactly `size` bytes into `destination`.
  Expected<void> read_into(std::string_view hash, void* destination, std::size_t size) const;
  // Maps and verifies a blob of exactly `size` (> 0) bytes, copy-on-write: no copy of its bytes is
  // made, which for a model's tens of megabytes of weights is most of the cost of a read. Its
  // SHA-256 is not computed again when the file is still `vouched` (the identity it had when a
  // trusted process hashed it: the coordinator that wrote it).
  Expected<MappedFile> map(std::string_view hash, std::size_t size, const FileIdentity* vouched = nullptr) const;
  // The blob's file's identity now, for vouching for a blob this process wrote or verified.
  Expected<FileIdentity> identity(std::string_view hash) const;

  Expected<void> write_root(std::string_view name, const std::vector<std::string>& hashes) const;
  Expected<std::vector<std::string>> read_root(std::string_view name) const;
  Expected<std::vector<std::string>> root_names() const;
  Expected<void> remove_root(std::string_view name) const;

  Expected<StoreStats> stat() const;
  Expected<VerifyReport> verify() const;
  // Deletes every blob no root names and every leftover temp file, under the exclusive lock: only
  // regular files named as the store names them (blobs/XX/<hash starting XX>, the temp names of
  // write_file_atomic and the Python StoreWriter), each unlinked in its directory, never through a link.
  Expected<GcReport> gc() const;
  // gc() if no writer holds the store now, else nullopt at once: a daemon sharing the store with
  // others never waits on a writer that is stopped (SIGSTOP) or cut off while it holds the lock.
  Expected<std::optional<GcReport>> gc_if_idle() const;
  // The exclusive lock if no one holds the store now, else nullopt at once.
  Expected<std::optional<StoreLock>> try_lock_exclusive() const;

 private:
  explicit ContentStore(std::filesystem::path root) : root_(std::move(root)) {}
  // nullopt: LOCK_NB was asked and someone holds a conflicting lock.
  Expected<std::optional<StoreLock>> lock(int operation) const;
  Expected<GcReport> collect(const StoreLock& held) const;
  std::filesystem::path root_path(std::string_view name) const;
  // A failed read of a blob as an error naming it; a missing one also names the store.
  Error read_error(const Error& error, std::string_view hash) const;
  // "blob HASH: WHAT", of `kind`.
  static Error blob_error(ErrorKind kind, std::string_view hash, const std::string& what);
  // A blob's bytes against its name: corrupt when they hash to something else.
  static Expected<void> verify_bytes(std::string_view hash, const void* data, std::size_t size);
  // What blobs/ holds: the blobs, and every entry the store would not have written.
  struct BlobListing {
    std::vector<std::string> hashes;    // sorted: regular files blobs/XX/<hash starting XX>
    std::uint64_t bytes = 0;            // theirs
    std::vector<std::string> strangers;  // "blobs/XX/NAME: why it is no blob"
  };
  Expected<BlobListing> list_blobs() const;
  // blobs/XX/<hash>, relative to root_.
  static std::filesystem::path blob_relative(std::string_view hash);
  // A blob's file, opened through no link, regular, of `size` bytes when given; errors name the hash.
  Expected<RegularFile> open_blob(std::string_view hash, std::optional<std::uint64_t> size) const;
  // blobs/XX/, created if absent, and refused if a link.
  Expected<void> make_fanout(std::string_view hash) const;
  // Hashes a blob's file, streamed through a fixed buffer, against its name.
  Expected<void> verify_blob(std::string_view hash) const;
  // Unlinks the blob's file if it is a regular file; its size, 0 when it was already gone.
  Expected<std::uint64_t> remove_blob(std::string_view hash) const;
  // Unlinks every regular file of tmp/ named as a temp file; how many.
  Expected<std::uint64_t> sweep_temp_files() const;

  friend class BlobBatch;
  Expected<std::string> put(const void* data, std::size_t size, FileSync sync) const;
  // Links `source`'s blob `hash` of `size` bytes in as BlobBatch::put_from() describes: false
  // (nothing done) where it must be copied instead.
  Expected<bool> link_from(const ContentStore& source, std::string_view hash, std::size_t size) const;

  std::filesystem::path root_;
};

// Blobs put together and made durable together, for many blobs at once (a propagation's hundreds
// of intermediates, which spent most of their time in one fsync each). Write a root naming them
// only after sync(): a root never names a blob the disk may not hold. sync() covers the blobs the
// batch found already there too, which another writer's batch may not have synced yet.
class BlobBatch {
 public:
  explicit BlobBatch(const ContentStore& store) : store_(store) {}

  Expected<std::string> put(const void* data, std::size_t size);
  // Puts `source`'s blob `hash` of `size` bytes here, verified; a source blob of another size, or not
  // a regular file, is refused before a byte is read. When both stores are on one file system and the
  // file is this user's alone to write, as a second link to it (git's local clone): nothing is copied,
  // and dropping it later frees no page the source still holds. Otherwise copied from a mapping of it
  // (no buffer of its size), as put() would.
  Expected<void> put_from(const ContentStore& source, std::string_view hash, std::size_t size);
  Expected<void> sync();

 private:
  const ContentStore& store_;
  std::vector<std::string> hashes_;
};

bool is_valid_root_name(std::string_view name);

}  // namespace minifyd
