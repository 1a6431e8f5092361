// End to end with the real minify-worker: its sandbox holds, and it dies with its coordinator.
#include <catch2/catch.hpp>

#include "tests/support/sandbox_checks.h"

using namespace minifyd;

namespace {

pool::WorkerConfig real_worker() {
  pool::WorkerConfig config;
  config.executable = MINIFYD_WORKER_EXECUTABLE;
  return config;
}

}  // namespace

TEST_CASE("the real worker's sandbox: allowlisted environment, fds 0-2, own process group", "[e2e][sandbox]") {
  test::check_sandbox(real_worker());
}

TEST_CASE("the real worker dies when its coordinator is SIGKILLed", "[e2e][sandbox]") {
  test::check_dies_with_coordinator(real_worker());
}
