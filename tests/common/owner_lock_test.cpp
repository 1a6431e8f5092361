// The owner lock of a directory (common/owner_lock.h): one holder at a time, the holder named, the lock
// free again once its holder's descriptor is gone.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "common/file_util.h"
#include "common/owner_lock.h"
#include "tests/support/temp_dir.h"

using namespace minifyd;

TEST_CASE("a directory's owner lock has one holder, named to whoever else asks, and is free once it is gone") {
  test::TempDir dir;
  std::optional<OwnerLock> first;
  {
    auto held = OwnerLock::acquire(dir.path());
    REQUIRE(held.has_value());
    first.emplace(std::move(*held));
  }
  auto written = read_file(dir.path() / owner_lock_file_name);
  REQUIRE(written.has_value());
  CHECK(*written == std::to_string(::getpid()) + "\n");

  auto second = OwnerLock::acquire(dir.path());
  REQUIRE_FALSE(second.has_value());
  CHECK(second.error().kind == ErrorKind::invalid_input);
  CHECK(second.error().message == dir.path().string() + " is being written by another process (pid " +
                                      std::to_string(::getpid()) + "): wait for it to end, or choose another directory");

  first.reset();
  CHECK(OwnerLock::acquire(dir.path()).has_value());
}

TEST_CASE("an owner lock planted as a link is refused and its target left as it was") {
  test::TempDir dir;
  std::filesystem::path victim = dir / "victim";
  std::ofstream(victim) << "a victim's file\n";
  std::filesystem::create_directory(dir / "out");
  std::filesystem::create_symlink(victim, dir / "out" / owner_lock_file_name);
  auto held = OwnerLock::acquire(dir / "out");
  REQUIRE_FALSE(held.has_value());
  CHECK(held.error().kind == ErrorKind::invalid_input);
  CHECK(held.error().message == (dir / "out" / owner_lock_file_name).string() +
                                    " is a symbolic link, which is not followed here");
  CHECK(read_file(victim).value() == "a victim's file\n");
}

TEST_CASE("a directory of another user's is not written") {
  if (::geteuid() != 0) return;  // only root can make a directory another user's
  test::TempDir dir;
  std::filesystem::create_directory(dir / "theirs");
  REQUIRE(::chown((dir / "theirs").c_str(), 65534, 65534) == 0);
  auto held = OwnerLock::acquire(dir / "theirs");
  REQUIRE_FALSE(held.has_value());
  CHECK(held.error().kind == ErrorKind::invalid_input);
  CHECK(held.error().message == (dir / "theirs").string() + " belongs to uid 65534, not to this user (uid 0): "
                                                             "choose a directory of your own");
  CHECK_FALSE(std::filesystem::exists(dir / "theirs" / owner_lock_file_name));
}
