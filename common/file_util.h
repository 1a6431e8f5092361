// Whole-file reads and crash-safe writes (temp file, fsync, rename), with errors naming the path.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "common/expected.h"

namespace minifyd {

// An open file's descriptor (or -1), closed on every way out.
struct OpenFile {
  explicit OpenFile(int descriptor) : fd(descriptor) {}
  OpenFile(OpenFile&& other) noexcept : fd(std::exchange(other.fd, -1)) {}
  OpenFile& operator=(OpenFile&& other) noexcept;
  OpenFile(const OpenFile&) = delete;
  OpenFile& operator=(const OpenFile&) = delete;
  ~OpenFile();

  int fd;
};

// A regular file open for reading, with what fstat said of it once open.
struct RegularFile {
  OpenFile file;
  struct stat info;
};

// Opens a regular file for reading, following links (the user's own files: graph.json, a config).
// The open does not block (O_NONBLOCK), so a FIFO or a device is refused (invalid_input, naming the
// path and what it is) rather than waited on or read without end.
Expected<RegularFile> open_regular_file(const std::filesystem::path& path);

// Opens `relative` (plain names: no ".", ".." or leading "/") under the directory `base`, each name
// opened relative to the one before with O_NOFOLLOW: a symbolic link on the way or at the end is
// refused (invalid_input naming it), so nothing planted inside `base` sends the open elsewhere.
// `base` itself resolves as any path does. `flags` are open(2)'s; O_NOFOLLOW and O_CLOEXEC are added.
Expected<OpenFile> open_under(const std::filesystem::path& base, const std::filesystem::path& relative, int flags,
                              mode_t mode = 0);

// How a content store opens a blob: open_under's no-link walk, a regular file only (opened without
// blocking), and, when `size` is given, refused (corrupt) before a byte is read unless it holds
// exactly `size` bytes: a FIFO, /dev/zero behind a link, or a sparse 8 GiB file where 128 bytes
// were promised is never read.
Expected<RegularFile> open_regular_under(const std::filesystem::path& base, const std::filesystem::path& relative,
                                         std::optional<std::uint64_t> size);

// Reads a whole file opened with open_regular_file: its fstat size, then on to its end for a file
// that grew meanwhile (or a /proc file, whose size is 0).
Expected<std::string> read_file(const std::filesystem::path& path);
// The same of a file already open; `path` names it in errors.
Expected<std::string> read_file(const RegularFile& file, const std::filesystem::path& path);

// Reads `size` bytes from the start of an open file into `destination` without a copy between,
// never more; corrupt when it holds fewer (it shrank since it was opened). `path` names it in errors.
Expected<void> read_exactly(const RegularFile& file, const std::filesystem::path& path, void* destination,
                            std::size_t size);

// When a written file reaches the disk: before write_file_atomic returns, or when the caller
// syncs it with sync_file (many files written at once, synced together: ext4's ordered mode
// commits them all with the first fsync, where one each paid a journal commit apiece).
enum class FileSync { now, later };

// Writes data to a fresh temp file in temp_dir (default: the target's directory), fsyncs it (with
// FileSync::now), and renames it onto path: readers see the old content or the new, never a part.
Expected<void> write_file_atomic(const std::filesystem::path& path, std::string_view data,
                                 const std::filesystem::path& temp_dir = {}, FileSync sync = FileSync::now);

// fsync of a file written with FileSync::later.
Expected<void> sync_file(const std::filesystem::path& path);

// A new directory parent/PREFIXxxxxxx (mkdtemp), readable by its owner only.
Expected<std::filesystem::path> create_unique_directory(const std::filesystem::path& parent, const std::string& prefix);

// Between fork and exec (async-signal-safe): every descriptor from 3 up marked close-on-exec, so a
// child program inherits only stdin, stdout and stderr.
void close_descriptors_on_exec();

// "PATH: strerror(errno)" as an io error (not_found for ENOENT, no_space for ENOSPC and EDQUOT).
Error errno_error(const std::string& what, int error_number);

}  // namespace minifyd
