// The `minify` command line: parses options and dispatches to one function per subcommand.
#pragma once

namespace minifyd::cli {

// Exit codes shared by every subcommand.
inline constexpr int exit_ok = 0;
inline constexpr int exit_failed = 1;  // the command ran and the answer is "no" (invalid, corrupt)
inline constexpr int exit_usage = 2;   // bad options, or input that could not be read
inline constexpr int exit_worker_error = 3;  // no worker could answer (failed start, broken protocol)
inline constexpr int exit_does_not_fail = 4;  // `run`: the input graph does not fail: nothing to minimize

int run(int argc, char** argv);

}  // namespace minifyd::cli
