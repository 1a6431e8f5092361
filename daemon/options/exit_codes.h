// The exit codes of minify's and minifyd's commands (docs/cli.md), and the code of a command that failed.
#pragma once

#include "common/expected.h"

namespace minifyd::options {

inline constexpr int exit_ok = 0;
inline constexpr int exit_failed = 1;  // the command ran and the answer is "no" (invalid, corrupt)
inline constexpr int exit_usage = 2;   // bad options, or input that could not be read
inline constexpr int exit_worker_error = 3;  // no worker could answer (failed start, broken protocol)
inline constexpr int exit_does_not_fail = 4;  // `run`: the input graph does not fail: nothing to minimize
inline constexpr int exit_no_space = 5;       // the disk is full: an output could not be written

// The exit code of a command that failed with `error` once its options were taken: a worker that
// could not answer, or a pipe or file that failed (io), is exit_worker_error; a request the worker
// refused (a corrupted blob, an invalid graph) and any other input the user gave is exit_usage; a
// write the disk had no room for is exit_no_space; so
// query, run and analyze say the same thing for the same cause.
int exit_code_of(const Error& error);

}  // namespace minifyd::options
