// The content store's upkeep: its blobs and roots listed through no link, blobs verified, stats, and
// garbage collection under the exclusive lock.
#include "common/content_store.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <optional>
#include <set>

#include "common/file_util.h"
#include "common/sha256.h"

namespace minifyd {
namespace {

namespace fs = std::filesystem;

constexpr const char* temp_directory_name = "tmp";

// Letters and digits, and those of `extra`: what mkstemp and Python's tempfile draw names from.
bool is_drawn_name(std::string_view text, std::string_view extra) {
  return std::all_of(text.begin(), text.end(), [&](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || extra.find(c) != std::string_view::npos;
  });
}

// The names the store's writers give their temp files: write_file_atomic's ".NAME.XXXXXX" and
// Python's tempfile.mkstemp "tmpXXXXXXXX" (graph_format.py's StoreWriter).
bool is_temp_file_name(std::string_view name) {
  bool ours = name.size() > 8 && name.front() == '.' && name[name.size() - 7] == '.' &&
              is_drawn_name(name.substr(name.size() - 6), "");
  bool python = name.size() == 11 && name.substr(0, 3) == "tmp" && is_drawn_name(name.substr(3), "_");
  return ours || python;
}

bool is_fanout_name(std::string_view name) {
  return name.size() == 2 && std::all_of(name.begin(), name.end(), [](char c) {
           return std::isdigit(static_cast<unsigned char>(c)) || (c >= 'a' && c <= 'f');
         });
}

// A directory's entry names (without . and ..), read from an open descriptor of it (its own, which
// fdopendir takes over): no link on the way to it was followed by whoever opened it.
// The names in the open directory `dir` (path names it in errors), read through a second descriptor of
// it: `dir` stays open for the *at() calls on what is listed.
Expected<std::vector<std::string>> entry_names(const OpenFile& dir, const fs::path& path) {
  OpenFile listed{::dup(dir.fd)};
  if (listed.fd < 0) return errno_error(path.string(), errno);
  DIR* stream = ::fdopendir(listed.fd);
  if (stream == nullptr) return errno_error(path.string(), errno);
  listed.fd = -1;  // closedir closes it
  std::vector<std::string> names;
  errno = 0;
  while (const dirent* entry = ::readdir(stream)) {
    std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(std::move(name));
  }
  int saved = errno;
  ::closedir(stream);
  if (saved != 0) return errno_error(path.string(), saved);
  return names;
}

// A directory of the store, opened without following a link, and the names in it.
struct Listing {
  OpenFile dir;
  std::vector<std::string> names;
};

// root/relative's Listing; nullopt where it does not exist.
Expected<std::optional<Listing>> list_under(const fs::path& root, const fs::path& relative) {
  auto dir = open_under(root, relative, O_RDONLY | O_DIRECTORY);
  if (!dir && dir.error().kind == ErrorKind::not_found) return std::optional<Listing>();
  if (!dir) return dir.error();
  auto names = entry_names(*dir, root / relative);
  if (!names) return names.error();
  return std::optional<Listing>(Listing{std::move(*dir), std::move(*names)});
}

}  // namespace

Expected<std::vector<std::string>> ContentStore::root_names() const {
  std::vector<std::string> names;
  auto roots = list_under(root_, "roots");
  if (!roots) return roots.error();
  if (!*roots) return names;
  for (const std::string& file : (*roots)->names) {
    if (file.size() > 5 && file.compare(file.size() - 5, 5, ".json") == 0 && file[0] != '.')
      names.push_back(file.substr(0, file.size() - 5));
  }
  std::sort(names.begin(), names.end());
  return names;
}

Expected<ContentStore::BlobListing> ContentStore::list_blobs() const {
  BlobListing listing;
  auto blobs = list_under(root_, "blobs");
  if (!blobs) return blobs.error();
  if (!*blobs) return listing;
  for (const std::string& fanout : (*blobs)->names) {
    fs::path relative = fs::path("blobs") / fanout;
    if (!is_fanout_name(fanout)) {
      listing.strangers.push_back(relative.string() + ": not a directory of blobs (named by two hex digits)");
      continue;
    }
    auto fanout_listing = list_under(root_, relative);
    if (!fanout_listing) return fanout_listing.error();
    if (!*fanout_listing) continue;  // removed since blobs/ was listed
    int dir_fd = (*fanout_listing)->dir.fd;
    for (const std::string& name : (*fanout_listing)->names) {
      struct stat info {};
      bool is_blob = is_sha256_hex(name) && name.compare(0, 2, fanout) == 0;
      bool regular = ::fstatat(dir_fd, name.c_str(), &info, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(info.st_mode);
      if (is_blob && regular) {
        listing.hashes.push_back(name);
        listing.bytes += static_cast<std::uint64_t>(info.st_size);
      } else {
        listing.strangers.push_back((relative / name).string() + (is_blob ? ": not a regular file" : ": not a blob name"));
      }
    }
  }
  std::sort(listing.hashes.begin(), listing.hashes.end());
  return listing;
}

Expected<void> ContentStore::verify_blob(std::string_view hash) const {
  auto file = open_blob(hash, std::nullopt);
  if (!file) return file.error();
  // Streamed: a blob of any size (a sparse 8 GiB one among them) costs one buffer, not its size.
  Sha256 hasher;
  std::vector<char> buffer(1 << 20);
  std::uint64_t total = 0;
  for (;;) {
    ssize_t got = ::read(file->file.fd, buffer.data(), buffer.size());
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return read_error(errno_error(blob_path(hash).string(), errno), hash);
    if (got == 0) break;
    hasher.update(buffer.data(), static_cast<std::size_t>(got));
    total += static_cast<std::uint64_t>(got);
  }
  if (hasher.finish_hex() != hash)
    return blob_error(ErrorKind::corrupt, hash, "corrupted: its " + std::to_string(total) + " bytes hash to something else");
  return {};
}

Expected<std::uint64_t> ContentStore::remove_blob(std::string_view hash) const {
  fs::path fanout = blob_relative(hash).parent_path();
  auto dir = open_under(root_, fanout, O_RDONLY | O_DIRECTORY);
  if (!dir) return dir.error();
  std::string name(hash);
  struct stat info {};
  if (::fstatat(dir->fd, name.c_str(), &info, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(info.st_mode)) return 0;
  if (::unlinkat(dir->fd, name.c_str(), 0) != 0 && errno != ENOENT) return errno_error(blob_path(hash).string(), errno);
  return static_cast<std::uint64_t>(info.st_size);
}

Expected<std::uint64_t> ContentStore::sweep_temp_files() const {
  auto temps = list_under(root_, temp_directory_name);
  if (!temps) return temps.error();
  if (!*temps) return 0;
  int dir_fd = (*temps)->dir.fd;
  std::uint64_t removed = 0;
  for (const std::string& name : (*temps)->names) {
    struct stat info {};
    if (!is_temp_file_name(name) || ::fstatat(dir_fd, name.c_str(), &info, AT_SYMLINK_NOFOLLOW) != 0 ||
        !S_ISREG(info.st_mode))
      continue;
    if (::unlinkat(dir_fd, name.c_str(), 0) == 0) ++removed;
  }
  return removed;
}

namespace {

// The union of all roots' blobs; an unreadable root is an error, since ignoring it could let gc
// delete what it protects. A root removed since the listing (another run finishing: removal takes
// no lock) protects nothing any more and is skipped.
Expected<std::set<std::string>> referenced_blobs(const ContentStore& store, std::uint64_t* root_count) {
  auto names = store.root_names();
  if (!names) return names.error();
  std::uint64_t read = 0;
  std::set<std::string> referenced;
  for (const std::string& name : *names) {
    auto hashes = store.read_root(name);
    if (!hashes && hashes.error().kind == ErrorKind::not_found) continue;
    if (!hashes) return hashes.error();
    ++read;
    referenced.insert(hashes->begin(), hashes->end());
  }
  if (root_count) *root_count = read;
  return referenced;
}

}  // namespace

Expected<StoreStats> ContentStore::stat() const {
  StoreStats stats;
  auto referenced = referenced_blobs(*this, &stats.roots);
  if (!referenced) return referenced.error();
  auto listing = list_blobs();
  if (!listing) return listing.error();
  const std::vector<std::string>& hashes = listing->hashes;
  stats.blobs = hashes.size();
  stats.bytes = listing->bytes;
  for (const std::string& hash : *referenced) {
    if (std::binary_search(hashes.begin(), hashes.end(), hash)) ++stats.referenced_blobs;
    else ++stats.missing_blobs;
  }
  return stats;
}

Expected<VerifyReport> ContentStore::verify() const {
  VerifyReport report;
  auto listing = list_blobs();
  if (!listing) return listing.error();
  const std::vector<std::string>& hashes = listing->hashes;
  report.problems = listing->strangers;
  report.blobs_checked = hashes.size() + listing->strangers.size();
  for (const std::string& hash : hashes)
    if (auto verified = verify_blob(hash); !verified) report.problems.push_back(verified.error().message);
  auto names = root_names();
  if (!names) return names.error();
  for (const std::string& name : *names) {
    auto root_hashes = read_root(name);
    if (!root_hashes) {
      report.problems.push_back(root_hashes.error().message);
      continue;
    }
    for (const std::string& hash : *root_hashes)
      if (!std::binary_search(hashes.begin(), hashes.end(), hash))
        report.problems.push_back("root " + name + " names blob " + hash + ", which is missing");
  }
  return report;
}

Expected<GcReport> ContentStore::gc() const {
  auto held = lock_exclusive();
  if (!held) return held.error();
  return collect(*held);
}

Expected<std::optional<GcReport>> ContentStore::gc_if_idle() const {
  auto held = try_lock_exclusive();
  if (!held) return held.error();
  if (!*held) return std::optional<GcReport>();
  auto collected = collect(**held);
  if (!collected) return collected.error();
  return std::optional<GcReport>(std::move(*collected));
}

Expected<GcReport> ContentStore::collect(const StoreLock&) const {
  auto referenced = referenced_blobs(*this, nullptr);
  if (!referenced) return referenced.error().with_context("gc refused");
  auto listing = list_blobs();
  if (!listing) return listing.error();
  GcReport report;
  for (const std::string& hash : listing->hashes) {
    if (referenced->count(hash) != 0) {
      ++report.blobs_kept;
      continue;
    }
    auto removed = remove_blob(hash);
    if (!removed) return removed.error();
    ++report.blobs_removed;
    report.bytes_removed += *removed;
  }
  // Under the exclusive lock no write is in progress, so every temp file is a leftover.
  auto temps = sweep_temp_files();
  if (!temps) return temps.error();
  report.temp_files_removed = *temps;
  return report;
}

}  // namespace minifyd
