// No link is followed inside a content store, and a blob is read by its size only
// (docs/security.md "Links and blobs"): links planted as the store's directories, lock or blobs are
// refused naming the path, a blob that is no regular file or not of the promised size is refused
// before a byte is read, and gc unlinks nothing but regular files of the store's own naming.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "common/content_store.h"
#include "common/file_util.h"
#include "common/json_view.h"
#include "common/sha256.h"
#include "tests/support/temp_dir.h"

using minifyd::ContentStore;
using minifyd::ErrorKind;
using minifyd::test::TempDir;
namespace fs = std::filesystem;

namespace {

ContentStore make_store(const fs::path& root) {
  auto store = ContentStore::open(root, true);
  REQUIRE(store.has_value());
  return std::move(*store);
}

void write(const fs::path& path, const std::string& bytes) { std::ofstream(path, std::ios::binary) << bytes; }

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Files a victim keeps in a directory a link may lead to; none may change.
fs::path victim_directory(const TempDir& dir) {
  fs::path victim = dir / "victim";
  fs::create_directories(victim);
  write(victim / "precious.txt", "keep me");
  write(victim / ".precious.txt.abcdef", "keep me too");  // named as a temp file of ours
  write(victim / "tmpabcdefgh", "and me");                 // named as Python's
  return victim;
}

void check_victim(const fs::path& victim) {
  CHECK(read(victim / "precious.txt") == "keep me");
  CHECK(read(victim / ".precious.txt.abcdef") == "keep me too");
  CHECK(read(victim / "tmpabcdefgh") == "and me");
}

void check_names(const minifyd::Error& error, const fs::path& path) {
  INFO(error.message);
  CHECK(error.message.find(path.string()) != std::string::npos);
}

}  // namespace

TEST_CASE("open_under follows no link on the way or at the end, and names the link", "[links]") {
  TempDir dir;
  fs::create_directories(dir / "base/real");
  write(dir / "base/real/file", "x");
  fs::create_directory_symlink(dir / "base/real", dir / "base/linked");
  fs::create_symlink(dir / "base/real/file", dir / "base/real/file-link");

  CHECK(minifyd::open_under(dir / "base", "real/file", O_RDONLY).has_value());
  auto through = minifyd::open_under(dir / "base", "linked/file", O_RDONLY);
  REQUIRE_FALSE(through.has_value());
  CHECK(through.error().kind == ErrorKind::invalid_input);
  CHECK(through.error().message == (dir / "base/linked").string() + " is a symbolic link, which is not followed here");
  auto at_end = minifyd::open_under(dir / "base", "real/file-link", O_RDONLY);
  REQUIRE_FALSE(at_end.has_value());
  check_names(at_end.error(), dir / "base/real/file-link");
  CHECK_FALSE(minifyd::open_under(dir / "base", "../base/real/file", O_RDONLY).has_value());
}

TEST_CASE("a regular file is opened without blocking; a FIFO or a directory is refused, not read", "[links]") {
  TempDir dir;
  REQUIRE(::mkfifo((dir / "fifo").c_str(), 0600) == 0);  // no writer: a blocking open would hang here
  auto fifo = minifyd::read_file(dir / "fifo");
  REQUIRE_FALSE(fifo.has_value());
  CHECK(fifo.error().message == (dir / "fifo").string() + " is a FIFO, not a regular file");
  auto directory = minifyd::read_file(dir.path());
  REQUIRE_FALSE(directory.has_value());
  CHECK(directory.error().kind == ErrorKind::invalid_input);
  write(dir / "sized", "12345");
  CHECK(minifyd::open_regular_under(dir.path(), "sized", 5).has_value());
  auto wrong = minifyd::open_regular_under(dir.path(), "sized", 4);
  REQUIRE_FALSE(wrong.has_value());
  CHECK(wrong.error().kind == ErrorKind::corrupt);
  CHECK(wrong.error().message == (dir / "sized").string() + ": holds 5 bytes, expected 4");
}

TEST_CASE("a blob that is a link, a FIFO, or of another size than asked is refused by every read, unread",
          "[links]") {
  TempDir dir;
  ContentStore store = make_store(dir / "store");
  std::string bytes(128, 'b');
  std::string hash = minifyd::sha256_hex(bytes.data(), bytes.size());
  fs::path blob = store.blob_path(hash);
  fs::create_directories(blob.parent_path());
  char buffer[128];
  auto refused_everywhere = [&](ErrorKind kind, const std::string& words) {
    auto got = store.get(hash, bytes.size());
    REQUIRE_FALSE(got.has_value());
    CHECK(got.error().kind == kind);
    CHECK(got.error().message.find("blob " + hash + ": ") == 0);
    CHECK(got.error().message.find(words) != std::string::npos);
    CHECK_FALSE(store.read_into(hash, buffer, sizeof buffer).has_value());
    CHECK_FALSE(store.map(hash, bytes.size()).has_value());
    CHECK_FALSE(store.identity(hash).has_value());
    CHECK_FALSE(store.contains(hash));
    auto report = store.verify();
    REQUIRE(report.has_value());
    REQUIRE(report->problems.size() == 1);
    CHECK(report->problems[0].find(hash) != std::string::npos);
  };

  fs::create_symlink("/dev/zero", blob);
  refused_everywhere(ErrorKind::invalid_input, "is a symbolic link");
  fs::remove(blob);

  REQUIRE(::mkfifo(blob.c_str(), 0600) == 0);
  refused_everywhere(ErrorKind::invalid_input, "not a regular file");
  fs::remove(blob);

  // 8 GiB where 128 bytes are promised, sparse: refused by its size, so it costs neither the memory
  // nor the time of reading it (verify alone streams it, through a fixed buffer).
  {
    minifyd::OpenFile file{::open(blob.c_str(), O_CREAT | O_WRONLY, 0644)};
    REQUIRE(::ftruncate(file.fd, 8LL << 30) == 0);
  }
  auto oversized = store.get(hash, bytes.size());
  REQUIRE_FALSE(oversized.has_value());
  CHECK(oversized.error().kind == ErrorKind::corrupt);
  CHECK(oversized.error().message.find("holds 8589934592 bytes, expected 128") != std::string::npos);
  CHECK_FALSE(store.read_into(hash, buffer, sizeof buffer).has_value());
  CHECK_FALSE(store.map(hash, bytes.size()).has_value());
  ContentStore target = make_store(dir / "target");
  minifyd::BlobBatch batch(target);
  auto imported = batch.put_from(store, hash, bytes.size());
  REQUIRE_FALSE(imported.has_value());
  CHECK(imported.error().kind == ErrorKind::corrupt);
  CHECK_FALSE(target.contains(hash));
}

TEST_CASE("a store whose tmp/, blobs/XX/ or roots/ is a link, or whose lock is one, is refused naming it",
          "[links]") {
  TempDir dir;
  fs::path victim = victim_directory(dir);
  for (const char* sub : {"tmp", "roots", "blobs"}) {
    fs::path root = dir / (std::string("store-") + sub);
    make_store(root);
    fs::remove_all(root / sub);
    fs::create_directory_symlink(victim, root / sub);
    for (bool create : {false, true}) {
      auto opened = ContentStore::open(root, create);
      REQUIRE_FALSE(opened.has_value());
      check_names(opened.error(), root / sub);
    }
  }

  // A fanout directory planted as a link: puts, reads, gc and verify refuse it.
  ContentStore store = make_store(dir / "store");
  std::string bytes = "into the victim's directory?";
  std::string hash = minifyd::sha256_hex(bytes.data(), bytes.size());
  fs::create_directory_symlink(victim, store.blob_path(hash).parent_path());
  auto put = store.put(bytes.data(), bytes.size());
  REQUIRE_FALSE(put.has_value());
  check_names(put.error(), store.blob_path(hash).parent_path());
  CHECK_FALSE(store.get(hash, bytes.size()).has_value());
  CHECK_FALSE(store.gc().has_value());
  CHECK_FALSE(store.verify().has_value());
  check_victim(victim);
  CHECK(std::distance(fs::directory_iterator(victim), fs::directory_iterator()) == 3);

  // A dangling link as the lock: no file is made at its target.
  ContentStore locked = make_store(dir / "locked");
  fs::remove(dir / "locked/lock");
  fs::create_symlink(dir / "lock-target", dir / "locked/lock");
  auto lock = locked.lock_shared();
  REQUIRE_FALSE(lock.has_value());
  check_names(lock.error(), dir / "locked/lock");
  CHECK_FALSE(ContentStore::open(dir / "locked", true).has_value());
  CHECK_FALSE(fs::exists(fs::symlink_status(dir / "lock-target")));
}

TEST_CASE("gc unlinks only regular files of the store's own naming, never through a link", "[links]") {
  TempDir dir;
  fs::path victim = victim_directory(dir);
  ContentStore store = make_store(dir / "store");
  std::string kept_bytes = "kept", dropped_bytes = "dropped";
  auto kept = store.put(kept_bytes.data(), kept_bytes.size());
  auto dropped = store.put(dropped_bytes.data(), dropped_bytes.size());
  REQUIRE(kept.has_value());
  REQUIRE(dropped.has_value());
  REQUIRE(store.write_root("graph", {*kept}).has_value());

  // What the store never wrote: a link named by a hash, a file of another name, links in tmp/.
  std::string linked_hash(64, 'c');
  fs::create_directories(store.blob_path(linked_hash).parent_path());
  fs::create_symlink(victim / "precious.txt", store.blob_path(linked_hash));
  write(store.blob_path(*kept).parent_path() / "notes.txt", "mine");
  fs::create_symlink(victim / ".precious.txt.abcdef", dir / "store/tmp/.graph.json.abcdef");
  fs::create_directory(dir / "store/tmp/.graph.json.ghijkl");
  write(dir / "store/tmp/.graph.json.zyxwvu", "left by a killed writer");
  write(dir / "store/tmp/tmp12345678", "left by a killed Python writer");
  write(dir / "store/tmp/README", "someone's");

  auto report = store.gc();
  REQUIRE(report.has_value());
  CHECK(report->blobs_removed == 1);
  CHECK(report->blobs_kept == 1);
  CHECK(report->temp_files_removed == 2);
  CHECK_FALSE(fs::exists(store.blob_path(*dropped)));
  CHECK(store.get(*kept, kept_bytes.size()).has_value());
  CHECK(fs::is_symlink(store.blob_path(linked_hash)));
  CHECK(fs::exists(store.blob_path(*kept).parent_path() / "notes.txt"));
  CHECK(fs::is_symlink(dir / "store/tmp/.graph.json.abcdef"));
  CHECK(fs::is_directory(dir / "store/tmp/.graph.json.ghijkl"));
  CHECK(fs::exists(dir / "store/tmp/README"));
  CHECK_FALSE(fs::exists(dir / "store/tmp/.graph.json.zyxwvu"));
  CHECK_FALSE(fs::exists(dir / "store/tmp/tmp12345678"));
  check_victim(victim);

  auto verified = store.verify();
  REQUIRE(verified.has_value());
  CHECK(verified->problems.size() == 2);  // the link and notes.txt, each named
}

TEST_CASE("a JSON file larger than a document may be is refused before it is read", "[links]") {
  TempDir dir;
  {
    minifyd::OpenFile file{::open((dir / "graph.json").c_str(), O_CREAT | O_WRONLY, 0644)};
    REQUIRE(::ftruncate(file.fd, 8LL << 30) == 0);  // sparse: 8 GiB that cost no disk
  }
  auto read = minifyd::read_json_file(dir / "graph.json");
  REQUIRE_FALSE(read.has_value());
  CHECK(read.error().kind == ErrorKind::invalid_input);
  CHECK(read.error().message ==
        (dir / "graph.json").string() + ": 8589934592 bytes, more than the 256 MiB a JSON document may hold");
}
