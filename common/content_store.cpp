// The on-disk content store: blobs/ab/<hash>, roots/<name>.json, tmp/, VERSION, lock.
#include "common/content_store.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <optional>
#include <set>
#include <system_error>

#include <nlohmann/json.hpp>

#include "common/file_util.h"
#include "common/json_view.h"
#include "common/sha256.h"

namespace minifyd {
namespace {

namespace fs = std::filesystem;

constexpr const char* root_format = "minifyd.store-root";
constexpr int root_format_version = 1;

Error blob_error(ErrorKind kind, std::string_view hash, const std::string& what) {
  return make_error(kind, "blob " + std::string(hash) + ": " + what);
}

// A blob's bytes against its name.
Expected<void> verify_bytes(std::string_view hash, const void* data, std::size_t size) {
  if (sha256_hex(data, size) != hash)
    return blob_error(ErrorKind::corrupt, hash, "corrupted: its " + std::to_string(size) + " bytes hash to something else");
  return {};
}

// The store's layout: directories and files it reaches by these names, none of them a link.
constexpr const char* store_directories[] = {"blobs", "tmp", "roots"};
constexpr const char* version_file_name = "VERSION";
constexpr const char* lock_file_name = "lock";
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

bool is_valid_root_name(std::string_view name) {
  if (name.empty() || name == "." || name == "..") return false;
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-')) return false;
  return true;
}

StoreLock::~StoreLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the descriptor releases the flock
}

Expected<ContentStore> ContentStore::open(const fs::path& root, bool create) {
  if (create) {
    std::error_code ec;
    fs::create_directories(root, ec);
    if (ec) return make_error(ErrorKind::io, "creating " + root.string() + ": " + ec.message());
  }
  // Each directory of the layout is checked as it is, links refused; a store copied without its
  // empty directories (git keeps none) is still read.
  for (const char* sub : store_directories) {
    if (create && ::mkdir((root / sub).c_str(), 0755) != 0 && errno != EEXIST)
      return errno_error("creating " + (root / sub).string(), errno);
    auto dir = open_under(root, sub, O_RDONLY | O_DIRECTORY);
    if (!dir && !(dir.error().kind == ErrorKind::not_found && !create)) return dir.error();
  }
  auto version_file = open_regular_under(root, version_file_name, std::nullopt);
  if (create && !version_file && version_file.error().kind == ErrorKind::not_found) {
    auto written = write_file_atomic(root / version_file_name, store_version_text);
    if (!written) return written.error();
    version_file = open_regular_under(root, version_file_name, std::nullopt);
  }
  if (!version_file) {
    if (version_file.error().kind == ErrorKind::not_found)
      return make_error(ErrorKind::not_found, root.string() + " is not a minifyd content store (it has no VERSION file)");
    return version_file.error();
  }
  if (create) {
    auto lock_file = open_under(root, lock_file_name, O_CREAT | O_RDWR, 0644);
    if (!lock_file) return lock_file.error();
  }
  auto unsupported = [&](const std::string& found) {
    return make_error(ErrorKind::unsupported, root.string() + ": store format '" + found +
                                                  "' is not supported (this build reads 'minifyd-store 1')");
  };
  // A version line is a few bytes: a larger VERSION is no store of ours, and is not read whole.
  if (version_file->info.st_size > 64) return unsupported("a file of " + std::to_string(version_file->info.st_size) + " bytes");
  auto version = read_file(*version_file, root / version_file_name);
  if (!version) return version.error();
  if (*version != store_version_text) return unsupported(version->substr(0, version->find('\n')));
  return ContentStore(root);
}

fs::path ContentStore::blob_relative(std::string_view hash) {
  std::string name(hash);
  return fs::path("blobs") / name.substr(0, 2) / name;
}

fs::path ContentStore::blob_path(std::string_view hash) const { return root_ / blob_relative(hash); }

Expected<RegularFile> ContentStore::open_blob(std::string_view hash, std::optional<std::uint64_t> size) const {
  if (!is_sha256_hex(hash)) return blob_error(ErrorKind::invalid_input, hash, "not a SHA-256 digest");
  auto file = open_regular_under(root_, blob_relative(hash), size);
  if (!file) return read_error(file.error(), hash);
  return file;
}

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

fs::path ContentStore::root_path(std::string_view name) const {
  return root_ / "roots" / (std::string(name) + ".json");
}

Expected<std::optional<StoreLock>> ContentStore::lock(int operation) const {
  fs::path path = root_ / lock_file_name;
  auto opened = open_under(root_, lock_file_name, O_CREAT | O_RDWR, 0644);
  if (!opened) return opened.error();
  int fd = std::exchange(opened->fd, -1);  // the StoreLock's from here
  while (::flock(fd, operation) != 0) {
    if (errno == EINTR) continue;
    int saved = errno;
    ::close(fd);
    if (saved == EWOULDBLOCK && (operation & LOCK_NB) != 0) return std::optional<StoreLock>();
    return errno_error("flock " + path.string(), saved);
  }
  return std::optional<StoreLock>(StoreLock(fd));
}

Expected<StoreLock> ContentStore::lock_shared() const {
  auto held = lock(LOCK_SH);
  if (!held) return held.error();
  return std::move(**held);
}

Expected<StoreLock> ContentStore::lock_exclusive() const {
  auto held = lock(LOCK_EX);
  if (!held) return held.error();
  return std::move(**held);
}

Expected<std::optional<StoreLock>> ContentStore::try_lock_exclusive() const { return lock(LOCK_EX | LOCK_NB); }

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

bool ContentStore::contains(std::string_view hash) const { return open_blob(hash, std::nullopt).has_value(); }

Error ContentStore::read_error(const Error& error, std::string_view hash) const {
  if (error.kind == ErrorKind::not_found)
    return blob_error(ErrorKind::not_found, hash, "missing from the store at " + root_.string());
  return error.with_context("blob " + std::string(hash));
}

Expected<std::string> ContentStore::get(std::string_view hash, std::size_t size) const {
  std::string content(size, '\0');
  if (auto read = read_into(hash, content.data(), size); !read) return read.error();
  return content;
}

Expected<void> ContentStore::read_into(std::string_view hash, void* destination, std::size_t size) const {
  auto file = open_blob(hash, size);
  if (!file) return file.error();
  // Straight into the destination: a store's weights are tens of megabytes, read by every fresh worker.
  if (auto read = read_exactly(*file, blob_path(hash), destination, size); !read) return read_error(read.error(), hash);
  return verify_bytes(hash, destination, size);
}

Expected<MappedFile> ContentStore::map(std::string_view hash, std::size_t size, const FileIdentity* vouched) const {
  if (!is_sha256_hex(hash)) return blob_error(ErrorKind::invalid_input, hash, "not a SHA-256 digest");
  auto mapped = MappedFile::map(root_, blob_relative(hash), size);
  if (!mapped) return read_error(mapped.error(), hash);
  if (vouched != nullptr && *vouched == mapped->identity()) return mapped;
  if (auto verified = verify_bytes(hash, mapped->data(), size); !verified) return verified.error();
  return mapped;
}

Expected<FileIdentity> ContentStore::identity(std::string_view hash) const {
  auto file = open_blob(hash, std::nullopt);
  if (!file) return file.error();
  return identity_of(file->info);
}

Expected<void> ContentStore::write_root(std::string_view name, const std::vector<std::string>& hashes) const {
  if (!is_valid_root_name(name))
    return make_error(ErrorKind::invalid_input, "root name '" + std::string(name) + "' must match [A-Za-z0-9._-]+");
  for (const std::string& hash : hashes)
    if (!is_sha256_hex(hash))
      return make_error(ErrorKind::invalid_input, "root " + std::string(name) + ": '" + hash + "' is not a SHA-256 digest");
  nlohmann::json record{{"format", root_format}, {"version", root_format_version}, {"blobs", hashes}};
  auto held = lock_shared();
  if (!held) return held.error();
  return write_file_atomic(root_path(name), record.dump() + "\n", root_ / "tmp");
}

Expected<std::vector<std::string>> ContentStore::read_root(std::string_view name) const {
  std::string where = "root " + std::string(name);
  if (!is_valid_root_name(name))
    return make_error(ErrorKind::invalid_input, "root name '" + std::string(name) + "' must match [A-Za-z0-9._-]+");
  auto file = open_regular_under(root_, fs::path("roots") / (std::string(name) + ".json"), std::nullopt);
  if (!file) return file.error();
  auto text = read_file(*file, root_path(name));
  if (!text) return text.error();
  auto parsed = parse_json(*text);
  if (!parsed) return parsed.error().with_context(where);
  JsonView record(*parsed);
  auto fail = [&](const Error& error) { return Error{ErrorKind::corrupt, where + ": " + error.message}; };
  auto format = record.field("format");
  if (!format) return fail(format.error());
  auto version = record.field("version");
  if (!version) return fail(version.error());
  if (format->raw() != root_format || version->raw() != root_format_version)
    return fail(make_error(ErrorKind::corrupt, "not a minifyd.store-root version 1 record"));
  auto blobs = record.field("blobs");
  if (!blobs) return fail(blobs.error());
  auto count = blobs->array_size();
  if (!count) return fail(count.error());
  std::vector<std::string> hashes;
  for (std::size_t i = 0; i < *count; ++i) {
    auto hash = blobs->item(i).as_string();
    if (!hash) return fail(hash.error());
    if (!is_sha256_hex(*hash)) return fail(blobs->item(i).error("not a SHA-256 digest"));
    hashes.push_back(std::move(*hash));
  }
  return hashes;
}

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

Expected<void> ContentStore::remove_root(std::string_view name) const {
  if (!is_valid_root_name(name))
    return make_error(ErrorKind::invalid_input, "root name '" + std::string(name) + "' must match [A-Za-z0-9._-]+");
  if (::unlink(root_path(name).c_str()) != 0 && errno != ENOENT)
    return errno_error(root_path(name).string(), errno);
  return {};
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
