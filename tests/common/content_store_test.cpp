// The content store: verified reads, atomic concurrent writes from several processes, exact gc, the
// writer contract both languages keep.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <fstream>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "common/content_store.h"
#include "common/file_util.h"
#include "common/sha256.h"
#include "tests/support/temp_dir.h"

using minifyd::ContentStore;
using minifyd::ErrorKind;
using minifyd::test::TempDir;

namespace {

ContentStore make_store(const TempDir& dir) {
  auto store = ContentStore::open(dir / "store", true);
  REQUIRE(store.has_value());
  return std::move(*store);
}

std::string put(const ContentStore& store, const std::string& bytes) {
  auto hash = store.put(bytes.data(), bytes.size());
  REQUIRE(hash.has_value());
  return *hash;
}

void overwrite(const std::filesystem::path& path, const std::string& bytes) {
  std::filesystem::permissions(path, std::filesystem::perms::owner_write, std::filesystem::perm_options::add);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

}  // namespace

TEST_CASE("put names a blob by the SHA-256 of its bytes and get returns them", "[store]") {
  TempDir dir;
  ContentStore store = make_store(dir);
  std::string hash = put(store, "hello");
  CHECK(hash == "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824");
  CHECK(store.contains(hash));
  CHECK(std::filesystem::exists(dir / "store/blobs/2c" / hash));
  auto content = store.get(hash, 5);
  REQUIRE(content.has_value());
  CHECK(*content == "hello");
  CHECK(put(store, "hello") == hash);  // idempotent
  CHECK(put(store, "") == minifyd::sha256_hex("", 0));
}

TEST_CASE("a batch's blobs are the store's at once; its sync names a blob that vanished before it", "[store]") {
  TempDir dir;
  ContentStore store = make_store(dir);
  std::string existing = put(store, "already there");
  minifyd::BlobBatch batch(store);
  auto fresh = batch.put("fresh", 5);
  auto found = batch.put("already there", 13);
  REQUIRE(fresh.has_value());
  REQUIRE(found.has_value());
  CHECK(*found == existing);
  auto content = store.get(*fresh, 5);
  REQUIRE(content.has_value());
  CHECK(*content == "fresh");
  CHECK(batch.sync().has_value());
  CHECK(store.write_root("batch", {*fresh, existing}).has_value());

  auto gone = batch.put("removed by a gc", 15);
  REQUIRE(gone.has_value());
  std::filesystem::remove(store.blob_path(*gone));
  auto synced = batch.sync();
  REQUIRE_FALSE(synced.has_value());
  CHECK(synced.error().message.find(*gone) != std::string::npos);
}

TEST_CASE("a blob put from another store is linked when it is this user's alone, else copied; verified either way",
          "[store]") {
  TempDir dir;
  auto opened = ContentStore::open(dir / "source", true);
  REQUIRE(opened.has_value());
  ContentStore source = std::move(*opened);
  ContentStore store = make_store(dir);
  auto inode = [](const std::filesystem::path& path) {
    struct stat file {};
    REQUIRE(::stat(path.c_str(), &file) == 0);
    return file.st_ino;
  };

  std::string weights(100000, 'w');
  std::string linked = put(source, weights);
  minifyd::BlobBatch batch(store);
  REQUIRE(batch.put_from(source, linked, weights.size()).has_value());
  CHECK(inode(store.blob_path(linked)) == inode(source.blob_path(linked)));
  CHECK(batch.sync().has_value());
  auto content = store.get(linked, weights.size());
  REQUIRE(content.has_value());
  CHECK(*content == weights);

  // Writable by the group: another user could change it under the store's name, so it is copied.
  std::string shared = put(source, "shared with the group");
  std::filesystem::permissions(source.blob_path(shared), std::filesystem::perms::group_write,
                               std::filesystem::perm_options::add);
  REQUIRE(batch.put_from(source, shared, 21).has_value());
  CHECK(inode(store.blob_path(shared)) != inode(source.blob_path(shared)));
  CHECK(store.get(shared, 21).has_value());

  // Corrupt in the source: an error naming the hash, and nothing of it left in the store.
  std::string corrupt = put(source, "will be corrupted");
  overwrite(source.blob_path(corrupt), "was corrupted!!!!");
  auto refused = batch.put_from(source, corrupt, 17);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().kind == ErrorKind::corrupt);
  CHECK(refused.error().message.find(corrupt) != std::string::npos);
  CHECK_FALSE(store.contains(corrupt));

  // Missing from the source: not found, naming the hash and the source.
  std::string absent(64, 'a');
  auto missing = batch.put_from(source, absent, 1);
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().kind == ErrorKind::not_found);
  CHECK(missing.error().message.find((dir / "source").string()) != std::string::npos);
}

TEST_CASE("a corrupted or truncated blob is an error naming the hash", "[store]") {
  TempDir dir;
  ContentStore store = make_store(dir);
  std::string hash = put(store, std::string(1000, 'x'));

  overwrite(store.blob_path(hash), std::string(999, 'x') + "y");
  auto corrupted = store.get(hash, 1000);
  REQUIRE_FALSE(corrupted.has_value());
  CHECK(corrupted.error().kind == ErrorKind::corrupt);
  CHECK(corrupted.error().message.find("blob " + hash + ": corrupted") == 0);

  overwrite(store.blob_path(hash), std::string(500, 'x'));
  auto truncated = store.get(hash, 1000);
  REQUIRE_FALSE(truncated.has_value());
  CHECK(truncated.error().message.find(hash) != std::string::npos);

  char buffer[1000];
  auto short_read = store.read_into(hash, buffer, sizeof buffer);
  REQUIRE_FALSE(short_read.has_value());
  CHECK(short_read.error().kind == ErrorKind::corrupt);
  CHECK(short_read.error().message.find("blob " + hash + ": ") == 0);
  CHECK(short_read.error().message.find("holds 500 bytes, expected 1000") != std::string::npos);
  overwrite(store.blob_path(hash), std::string(999, 'x') + "y");
  auto wrong_bytes = store.read_into(hash, buffer, sizeof buffer);
  REQUIRE_FALSE(wrong_bytes.has_value());
  CHECK(wrong_bytes.error().message.find("blob " + hash + ": corrupted") == 0);
  std::string other = put(store, std::string(1000, 'z'));
  REQUIRE(store.read_into(other, buffer, sizeof buffer).has_value());
  CHECK(std::string(buffer, sizeof buffer) == std::string(1000, 'z'));
  auto unknown = store.read_into(std::string(64, 'f'), buffer, sizeof buffer);
  REQUIRE_FALSE(unknown.has_value());
  CHECK(unknown.error().kind == ErrorKind::not_found);

  REQUIRE(store.write_root("graph", {hash}).has_value());
  auto report = store.verify();
  REQUIRE(report.has_value());
  REQUIRE(report->problems.size() == 1);
  CHECK(report->problems[0].find(hash) != std::string::npos);

  std::string absent(64, 'e');
  auto missing = store.get(absent, 1);
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().kind == ErrorKind::not_found);
  CHECK(missing.error().message.find("blob " + absent + ": missing") == 0);
}

// A mapping is a copy-on-write view of the blob's file: verified when made, written privately, and
// mapped again only while the path still names the file it was made from.
TEST_CASE("a mapped blob is verified, private to its mapping, and mapped again only from its own file", "[store]") {
  TempDir dir;
  ContentStore store = make_store(dir);
  std::string bytes(100000, 'm');
  std::string hash = put(store, bytes);

  auto mapped = store.map(hash, bytes.size());
  REQUIRE(mapped.has_value());
  CHECK(std::string(static_cast<const char*>(mapped->data()), mapped->size()) == bytes);
  auto again = mapped->remap();
  REQUIRE(again.has_value());
  static_cast<char*>(again->data())[0] = 'w';
  CHECK(static_cast<const char*>(mapped->data())[0] == 'm');
  CHECK(store.get(hash, bytes.size()).value() == bytes);  // the file never sees a mapping's write

  auto wrong_size = store.map(hash, bytes.size() + 1);
  REQUIRE_FALSE(wrong_size.has_value());
  CHECK(wrong_size.error().kind == ErrorKind::corrupt);
  CHECK(wrong_size.error().message.find("blob " + hash + ": ") == 0);
  CHECK(wrong_size.error().message.find("holds 100000 bytes, expected 100001") != std::string::npos);
  auto unknown = store.map(std::string(64, 'f'), 10);
  REQUIRE_FALSE(unknown.has_value());
  CHECK(unknown.error().kind == ErrorKind::not_found);

  // Replaced by another file (as a put after a gc would): a new mapping would not hold the bytes
  // verified, so there is none.
  std::filesystem::path replacement = dir / "replacement";
  std::ofstream(replacement, std::ios::binary) << bytes;
  std::filesystem::rename(replacement, store.blob_path(hash));
  CHECK_FALSE(mapped->remap().has_value());
  std::filesystem::remove(store.blob_path(hash));
  CHECK_FALSE(mapped->remap().has_value());
  CHECK(std::string(static_cast<const char*>(mapped->data()), 10) == std::string(10, 'm'));  // the mapping outlives its file

  std::string other = put(store, std::string(100000, 'o'));
  overwrite(store.blob_path(other), std::string(99999, 'o') + "p");
  auto corrupted = store.map(other, 100000);
  REQUIRE_FALSE(corrupted.has_value());
  CHECK(corrupted.error().kind == ErrorKind::corrupt);
  CHECK(corrupted.error().message.find("blob " + other + ": corrupted") == 0);
}

// A vouched blob is not hashed while its file keeps the identity vouched for; once written since,
// it is hashed again whatever was vouched.
TEST_CASE("a blob vouched for is mapped without its hash while its file is the one vouched for", "[store]") {
  TempDir dir;
  ContentStore store = make_store(dir);
  std::string hash = put(store, std::string(100000, 'v'));
  auto before = store.identity(hash);
  REQUIRE(before.has_value());
  CHECK(before->size == 100000);
  REQUIRE(store.map(hash, 100000, &*before).has_value());

  overwrite(store.blob_path(hash), std::string(99999, 'v') + "w");
  auto stale = store.map(hash, 100000, &*before);  // written since it was vouched for: hashed
  REQUIRE_FALSE(stale.has_value());
  CHECK(stale.error().message.find("blob " + hash + ": corrupted") == 0);
  auto after = store.identity(hash);
  REQUIRE(after.has_value());
  CHECK(*after != *before);
  CHECK(store.map(hash, 100000, &*after).has_value());  // vouched for as it is now: taken at its word
  CHECK_FALSE(store.map(hash, 100000).has_value());
  CHECK(store.identity(std::string(64, 'f')).error().kind == ErrorKind::not_found);
}

TEST_CASE("a directory that is not a store, or of another version, is refused", "[store]") {
  TempDir dir;
  auto absent = ContentStore::open(dir / "nothing", false);
  REQUIRE_FALSE(absent.has_value());
  CHECK(absent.error().message.find("is not a minifyd content store") != std::string::npos);
  make_store(dir);
  overwrite(dir / "store/VERSION", "minifyd-store 9\n");
  auto future = ContentStore::open(dir / "store", false);
  REQUIRE_FALSE(future.has_value());
  CHECK(future.error().message.find("store format 'minifyd-store 9' is not supported") != std::string::npos);
}

TEST_CASE("two writer processes of the same content leave one valid blob", "[store]") {
  TempDir dir;
  ContentStore store = make_store(dir);
  // 4 MiB so that the writes overlap in time; each process writes it many times.
  std::string bytes(4 << 20, '\0');
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>((i * 7919) >> 3);
  std::string expected = minifyd::sha256_hex(bytes.data(), bytes.size());

  std::vector<pid_t> children;
  for (int writer = 0; writer < 2; ++writer) {
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      auto own = ContentStore::open(dir / "store", true);
      int failures = own ? 0 : 1;
      for (int round = 0; round < 10 && own; ++round) {
        // Force a real write each round, racing the other process's rename.
        ::unlink(own->blob_path(expected).c_str());
        auto hash = own->put(bytes.data(), bytes.size());
        if (!hash || *hash != expected) ++failures;
      }
      ::_exit(failures == 0 ? 0 : 1);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
  auto content = store.get(expected, bytes.size());
  REQUIRE(content.has_value());
  CHECK(*content == bytes);
  std::size_t blobs = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir / "store/blobs"))
    blobs += entry.is_regular_file() ? 1 : 0;
  CHECK(blobs == 1);
  CHECK(std::filesystem::is_empty(dir / "store/tmp"));
}

TEST_CASE("gc removes exactly the blobs no root names", "[store]") {
  TempDir dir;
  ContentStore store = make_store(dir);
  std::string a = put(store, "a"), b = put(store, "b"), c = put(store, "c"), d = put(store, "d");
  REQUIRE(store.write_root("graph", {a, b}).has_value());
  REQUIRE(store.write_root("job-7", {b, c}).has_value());
  std::ofstream(dir / "store/tmp/.graph.json.a1B2c3") << "partial";  // as write_file_atomic names it

  auto report = store.gc();
  REQUIRE(report.has_value());
  CHECK(report->blobs_removed == 1);
  CHECK(report->bytes_removed == 1);
  CHECK(report->blobs_kept == 3);
  CHECK(report->temp_files_removed == 1);
  CHECK(store.contains(a));
  CHECK(store.contains(b));
  CHECK(store.contains(c));
  CHECK_FALSE(store.contains(d));

  REQUIRE(store.remove_root("job-7").has_value());
  report = store.gc();
  REQUIRE(report.has_value());
  CHECK(report->blobs_removed == 1);
  CHECK_FALSE(store.contains(c));
  auto stats = store.stat();
  REQUIRE(stats.has_value());
  CHECK(stats->blobs == 2);
  CHECK(stats->roots == 1);
  CHECK(stats->referenced_blobs == 2);
}

TEST_CASE("gc_if_idle collects only while no writer holds the store, and never waits for one", "[store]") {
  TempDir dir;
  ContentStore store = make_store(dir);
  std::string orphan = put(store, "orphan");
  // A writer in another process (another daemon of a shared store) holds the store, stopped mid-write.
  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  pid_t writer = ::fork();
  REQUIRE(writer >= 0);
  if (writer == 0) {
    auto own = ContentStore::open(dir / "store", false);
    auto held = own ? own->lock_shared() : minifyd::Expected<minifyd::StoreLock>(own.error());
    char byte = held ? 1 : 0;
    if (::write(ready[1], &byte, 1) != 1) ::_exit(1);
    ::pause();
    ::_exit(0);
  }
  char byte = 0;
  REQUIRE(::read(ready[0], &byte, 1) == 1);
  REQUIRE(byte == 1);
  auto busy = store.gc_if_idle();
  REQUIRE(busy.has_value());
  CHECK_FALSE(busy->has_value());
  CHECK(store.contains(orphan));
  auto locked = store.try_lock_exclusive();
  REQUIRE(locked.has_value());
  CHECK_FALSE(locked->has_value());
  ::kill(writer, SIGKILL);
  REQUIRE(::waitpid(writer, nullptr, 0) == writer);
  ::close(ready[0]);
  ::close(ready[1]);
  auto idle = store.gc_if_idle();
  REQUIRE(idle.has_value());
  REQUIRE(idle->has_value());
  CHECK((*idle)->blobs_removed == 1);
  CHECK_FALSE(store.contains(orphan));
}

TEST_CASE("gc refuses to run past an unreadable root", "[store]") {
  TempDir dir;
  ContentStore store = make_store(dir);
  std::string a = put(store, "a");
  std::ofstream(dir / "store/roots/broken.json") << "{\"format\": \"minifyd.store-root\", \"blobs\": [";
  auto report = store.gc();
  REQUIRE_FALSE(report.has_value());
  CHECK(report.error().message.find("gc refused: root broken") == 0);
  CHECK(store.contains(a));
}

TEST_CASE("gc skips roots removed while it runs and keeps what the others name", "[store]") {
  // Runs finishing beside gc remove their roots without the store lock; such a root protects
  // nothing, and gc must neither fail on it nor drop what the roots still there name.
  TempDir dir;
  ContentStore store = make_store(dir);
  std::string kept = put(store, "kept");
  REQUIRE(store.write_root("stays", {kept}).has_value());
  std::atomic<bool> done{false};
  std::size_t churned = 0;
  std::thread churn([&] {
    while (!done) {
      for (int i = 0; i < 64; ++i)
        if (!store.write_root("job-" + std::to_string(i), {kept}).has_value()) return;
      for (int i = 0; i < 64; ++i)
        if (!store.remove_root("job-" + std::to_string(i)).has_value()) return;
      ++churned;
    }
  });
  std::size_t failures = 0;
  std::string first_failure;
  for (int round = 0; round < 2000; ++round) {
    auto report = store.gc();
    if (!report && failures++ == 0) first_failure = report.error().message;
  }
  done = true;
  churn.join();
  INFO(first_failure);
  CHECK(churned > 0);
  CHECK(failures == 0);
  CHECK(store.contains(kept));
}

TEST_CASE("root names are checked", "[store]") {
  TempDir dir;
  ContentStore store = make_store(dir);
  CHECK_FALSE(store.write_root("../escape", {}).has_value());
  CHECK_FALSE(store.write_root("ok", {"not-a-hash"}).has_value());
  CHECK(store.write_root("job-1.checkpoint_2", {}).has_value());
  auto names = store.root_names();
  REQUIRE(names.has_value());
  CHECK(*names == std::vector<std::string>{"job-1.checkpoint_2"});
}

// The writer contract's cases, which Python's StoreWriter is held to as well (tests/roundtrip/test_store_writer.py).
TEST_CASE("the store's writer keeps the contract's cases (store_writer_cases.json)", "[store]") {
  auto text = minifyd::read_file(MINIFYD_STORE_WRITER_CASES);
  REQUIRE(text.has_value());
  nlohmann::json cases = nlohmann::json::parse(*text)["cases"];
  REQUIRE(cases.size() >= 10);
  for (const nlohmann::json& entry : cases) {
    INFO(entry["name"].get<std::string>());
    TempDir dir;
    ContentStore store = make_store(dir);
    minifyd::BlobBatch batch(store);
    std::vector<std::string> put_hashes;
    for (const nlohmann::json& blob : entry["blobs"]) {
      std::string bytes = blob.get<std::string>();
      auto hash = batch.put(bytes.data(), bytes.size());
      REQUIRE(hash.has_value());
      CHECK(*hash == minifyd::sha256_hex(bytes.data(), bytes.size()));
      put_hashes.push_back(*hash);
    }
    REQUIRE(batch.sync().has_value());
    std::vector<std::string> named;
    for (const nlohmann::json& blob : entry["root_blobs"])
      named.push_back(blob.is_number() ? put_hashes.at(blob.get<std::size_t>()) : blob.get<std::string>());
    std::string root = entry["root"].get<std::string>();
    auto written = store.write_root(root, named);
    std::filesystem::path store_dir = dir / "store";
    if (entry.contains("refused")) {
      REQUIRE_FALSE(written.has_value());
      for (const nlohmann::json& part : entry["refused"])
        CHECK_THAT(written.error().message, Catch::Contains(part.get<std::string>()));
      CHECK(std::filesystem::is_empty(store_dir / "roots"));
      continue;
    }
    REQUIRE(written.has_value());
    for (const std::string& hash : put_hashes) {
      auto bytes = minifyd::read_file(store_dir / "blobs" / hash.substr(0, 2) / hash);
      REQUIRE(bytes.has_value());
      CHECK(minifyd::sha256_hex(bytes->data(), bytes->size()) == hash);
    }
    std::set<std::string> distinct(put_hashes.begin(), put_hashes.end());
    CHECK(store.stat().value().blobs == distinct.size());
    CHECK(store.stat().value().missing_blobs == 0);
    auto record = minifyd::read_file(store_dir / "roots" / (root + ".json"));
    REQUIRE(record.has_value());
    nlohmann::json parsed = nlohmann::json::parse(*record);
    CHECK(parsed["format"] == "minifyd.store-root");
    CHECK(parsed["version"] == 1);
    CHECK(parsed["blobs"].get<std::vector<std::string>>() == named);
    CHECK(minifyd::read_file(store_dir / "VERSION").value() == "minifyd-store 1\n");
    CHECK(std::filesystem::is_empty(store_dir / "tmp"));
  }
}
