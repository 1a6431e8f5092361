// The on-disk content store: its layout, locks, reads and roots (blobs/ab/<hash>, roots/<name>.json, tmp/,
// VERSION, lock); content_store_writes.cpp writes blobs, content_store_maintenance.cpp lists, verifies and
// collects.
#include "common/content_store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <optional>
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

// The store's layout: directories and files it reaches by these names, none of them a link.
constexpr const char* store_directories[] = {"blobs", "tmp", "roots"};
constexpr const char* version_file_name = "VERSION";
constexpr const char* lock_file_name = "lock";

}  // namespace

Error ContentStore::blob_error(ErrorKind kind, std::string_view hash, const std::string& what) {
  return make_error(kind, "blob " + std::string(hash) + ": " + what);
}


// A blob's bytes against its name.
Expected<void> ContentStore::verify_bytes(std::string_view hash, const void* data, std::size_t size) {
  if (sha256_hex(data, size) != hash)
    return blob_error(ErrorKind::corrupt, hash, "corrupted: its " + std::to_string(size) + " bytes hash to something else");
  return {};
}

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

Expected<void> ContentStore::remove_root(std::string_view name) const {
  if (!is_valid_root_name(name))
    return make_error(ErrorKind::invalid_input, "root name '" + std::string(name) + "' must match [A-Za-z0-9._-]+");
  if (::unlink(root_path(name).c_str()) != 0 && errno != ENOENT)
    return errno_error(root_path(name).string(), errno);
  return {};
}

}  // namespace minifyd
