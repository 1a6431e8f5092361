// The on-disk content store: blobs/ab/<hash>, roots/<name>.json, tmp/, VERSION, lock.
#include "common/content_store.h"

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

// Lists a directory's entries, treating a missing directory as empty.
Expected<std::vector<fs::directory_entry>> list_dir(const fs::path& dir) {
  std::error_code ec;
  std::vector<fs::directory_entry> entries;
  fs::directory_iterator it(dir, ec);
  if (ec == std::errc::no_such_file_or_directory) return entries;
  if (ec) return make_error(ErrorKind::io, dir.string() + ": " + ec.message());
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) return make_error(ErrorKind::io, dir.string() + ": " + ec.message());
    entries.push_back(*it);
  }
  return entries;
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
  fs::path version_file = root / "VERSION";
  if (create) {
    std::error_code ec;
    for (const char* sub : {"blobs", "tmp", "roots"}) {
      fs::create_directories(root / sub, ec);
      if (ec) return make_error(ErrorKind::io, "creating " + (root / sub).string() + ": " + ec.message());
    }
    if (!fs::exists(version_file, ec)) {
      auto written = write_file_atomic(version_file, store_version_text);
      if (!written) return written.error();
    }
    int fd = ::open((root / "lock").c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
    if (fd < 0) return errno_error((root / "lock").string(), errno);
    ::close(fd);
  }
  auto version = read_file(version_file);
  if (!version) {
    if (version.error().kind == ErrorKind::not_found)
      return make_error(ErrorKind::not_found, root.string() + " is not a minifyd content store (it has no VERSION file)");
    return version.error();
  }
  if (*version != store_version_text)
    return make_error(ErrorKind::unsupported, root.string() + ": store format '" +
                                                  version->substr(0, version->find('\n')) +
                                                  "' is not supported (this build reads 'minifyd-store 1')");
  return ContentStore(root);
}

fs::path ContentStore::blob_path(std::string_view hash) const {
  std::string name(hash);
  return root_ / "blobs" / name.substr(0, 2) / name;
}

fs::path ContentStore::root_path(std::string_view name) const {
  return root_ / "roots" / (std::string(name) + ".json");
}

Expected<std::optional<StoreLock>> ContentStore::lock(int operation) const {
  fs::path path = root_ / "lock";
  int fd = ::open(path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
  if (fd < 0) return errno_error(path.string(), errno);
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
  struct stat existing {};
  if (::stat(path.c_str(), &existing) == 0 && static_cast<std::size_t>(existing.st_size) == size)
    return hash;
  auto held = lock_shared();
  if (!held) return held.error();
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec) return make_error(ErrorKind::io, "creating " + path.parent_path().string() + ": " + ec.message());
  auto written = write_file_atomic(path, std::string_view(static_cast<const char*>(data), size), root_ / "tmp", sync);
  if (!written) return written.error().with_context("storing blob " + hash);
  return hash;
}

Expected<std::string> BlobBatch::put(const void* data, std::size_t size) {
  auto hash = store_.put(data, size, FileSync::later);
  if (hash) hashes_.push_back(*hash);
  return hash;
}

Expected<void> BlobBatch::put_from(const ContentStore& source, std::string_view hash) {
  auto linked = store_.link_from(source, hash);
  if (!linked) return linked.error();
  if (!*linked) {
    auto bytes = source.get(hash);
    if (!bytes) return bytes.error();
    auto put = store_.put(bytes->data(), bytes->size(), FileSync::later);
    if (!put) return put.error();
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

Expected<bool> ContentStore::link_from(const ContentStore& source, std::string_view hash) const {
  if (!is_sha256_hex(hash)) return blob_error(ErrorKind::invalid_input, hash, "not a SHA-256 digest");
  fs::path from = source.blob_path(hash);
  fs::path to = blob_path(hash);
  std::error_code ec;
  fs::create_directories(to.parent_path(), ec);
  if (ec) return make_error(ErrorKind::io, "creating " + to.parent_path().string() + ": " + ec.message());
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
             (file.st_mode & (S_IWGRP | S_IWOTH)) == 0 && file.st_size > 0;
  std::optional<Error> refused;
  if (own) {
    auto verified = map(hash, static_cast<std::size_t>(file.st_size));
    if (verified) return true;
    refused = verified.error();
  }
  if (::unlink(to.c_str()) != 0 && errno != ENOENT) return errno_error("unlinking " + to.string(), errno);
  if (refused) return *refused;
  return false;
}

bool ContentStore::contains(std::string_view hash) const {
  std::error_code ec;
  return is_sha256_hex(hash) && fs::is_regular_file(blob_path(hash), ec);
}

Error ContentStore::read_error(const Error& error, std::string_view hash) const {
  if (error.kind == ErrorKind::not_found)
    return blob_error(ErrorKind::not_found, hash, "missing from the store at " + root_.string());
  return error.with_context("blob " + std::string(hash));
}

Expected<std::string> ContentStore::get(std::string_view hash) const {
  if (!is_sha256_hex(hash)) return blob_error(ErrorKind::invalid_input, hash, "not a SHA-256 digest");
  auto content = read_file(blob_path(hash));
  if (!content) return read_error(content.error(), hash);
  if (auto verified = verify_bytes(hash, content->data(), content->size()); !verified) return verified.error();
  return content;
}

Expected<void> ContentStore::read_into(std::string_view hash, void* destination, std::size_t size) const {
  if (!is_sha256_hex(hash)) return blob_error(ErrorKind::invalid_input, hash, "not a SHA-256 digest");
  // Straight into the destination: a store's weights are tens of megabytes, read by every fresh worker.
  auto read = read_file_into(blob_path(hash), destination, size);
  if (!read) return read_error(read.error(), hash);
  if (*read != size)
    return blob_error(ErrorKind::corrupt, hash, "holds " + std::to_string(*read) + " bytes, expected " + std::to_string(size));
  return verify_bytes(hash, destination, size);
}

Expected<MappedFile> ContentStore::map(std::string_view hash, std::size_t size, const FileIdentity* vouched) const {
  if (!is_sha256_hex(hash)) return blob_error(ErrorKind::invalid_input, hash, "not a SHA-256 digest");
  auto mapped = MappedFile::map(blob_path(hash), size);
  if (!mapped) return read_error(mapped.error(), hash);
  if (vouched != nullptr && *vouched == mapped->identity()) return mapped;
  if (auto verified = verify_bytes(hash, mapped->data(), size); !verified) return verified.error();
  return mapped;
}

Expected<FileIdentity> ContentStore::identity(std::string_view hash) const {
  if (!is_sha256_hex(hash)) return blob_error(ErrorKind::invalid_input, hash, "not a SHA-256 digest");
  auto found = identity_of(blob_path(hash));
  if (!found) return read_error(found.error(), hash);
  return found;
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
  auto text = read_file(root_path(name));
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
  auto entries = list_dir(root_ / "roots");
  if (!entries) return entries.error();
  std::vector<std::string> names;
  for (const auto& entry : *entries) {
    std::string file = entry.path().filename().string();
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

Expected<std::vector<std::string>> ContentStore::list_blobs() const {
  auto fanouts = list_dir(root_ / "blobs");
  if (!fanouts) return fanouts.error();
  std::vector<std::string> hashes;
  for (const auto& fanout : *fanouts) {
    auto entries = list_dir(fanout.path());
    if (!entries) return entries.error();
    for (const auto& entry : *entries) hashes.push_back(entry.path().filename().string());
  }
  std::sort(hashes.begin(), hashes.end());
  return hashes;
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
  auto hashes = list_blobs();
  if (!hashes) return hashes.error();
  std::error_code ec;
  for (const std::string& hash : *hashes) {
    ++stats.blobs;
    auto size = fs::file_size(blob_path(hash), ec);
    if (!ec) stats.bytes += size;
  }
  for (const std::string& hash : *referenced) {
    if (std::binary_search(hashes->begin(), hashes->end(), hash)) ++stats.referenced_blobs;
    else ++stats.missing_blobs;
  }
  return stats;
}

Expected<VerifyReport> ContentStore::verify() const {
  VerifyReport report;
  auto hashes = list_blobs();
  if (!hashes) return hashes.error();
  for (const std::string& hash : *hashes) {
    ++report.blobs_checked;
    if (!is_sha256_hex(hash)) {
      report.problems.push_back("blobs/" + hash.substr(0, 2) + "/" + hash + ": not a blob name");
      continue;
    }
    auto content = get(hash);
    if (!content) report.problems.push_back(content.error().message);
  }
  auto names = root_names();
  if (!names) return names.error();
  for (const std::string& name : *names) {
    auto root_hashes = read_root(name);
    if (!root_hashes) {
      report.problems.push_back(root_hashes.error().message);
      continue;
    }
    for (const std::string& hash : *root_hashes)
      if (!std::binary_search(hashes->begin(), hashes->end(), hash))
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
  auto hashes = list_blobs();
  if (!hashes) return hashes.error();
  GcReport report;
  std::error_code ec;
  for (const std::string& hash : *hashes) {
    if (referenced->count(hash) != 0) {
      ++report.blobs_kept;
      continue;
    }
    fs::path path = blob_path(hash);
    auto size = fs::file_size(path, ec);
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) return errno_error(path.string(), errno);
    ++report.blobs_removed;
    report.bytes_removed += ec ? 0 : size;
  }
  // Under the exclusive lock no write is in progress, so every temp file is a leftover.
  auto temps = list_dir(root_ / "tmp");
  if (!temps) return temps.error();
  for (const auto& entry : *temps)
    if (::unlink(entry.path().c_str()) == 0) ++report.temp_files_removed;
  return report;
}

}  // namespace minifyd
