// The `minify` executable.
#include "daemon/cli/cli.h"
#include "daemon/process/helper_process.h"

int main(int argc, char** argv) {
  // A ^C or SIGTERM ends `minify` as before, and with it any helper it runs (a repro file's import).
  minifyd::process::end_helpers_with_this_process();
  return minifyd::cli::run(argc, argv);
}
