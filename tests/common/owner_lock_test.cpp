// The owner lock of a directory (common/owner_lock.h): one holder at a time, the holder named, the lock
// free again once its holder's descriptor is gone.
#include <catch2/catch.hpp>

#include <unistd.h>

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
