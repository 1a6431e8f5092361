// Whole-file reads and crash-safe writes (temp file, fsync, rename), with errors naming the path.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "common/expected.h"

namespace minifyd {

// An open file's descriptor (or -1), closed on every way out.
struct OpenFile {
  explicit OpenFile(int descriptor) : fd(descriptor) {}
  OpenFile(const OpenFile&) = delete;
  OpenFile& operator=(const OpenFile&) = delete;
  ~OpenFile();

  int fd;
};

Expected<std::string> read_file(const std::filesystem::path& path);
// Reads a file of `size` bytes into `destination` without a copy between; returns the bytes read,
// which are fewer than `size` for a file that shrank meanwhile, or the file's own size (nothing
// read) when it is not `size`.
Expected<std::uint64_t> read_file_into(const std::filesystem::path& path, void* destination, std::size_t size);

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
