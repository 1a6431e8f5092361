// The minifyd Python package, where it is and how its modules run: each a bounded helper
// (helper_process.h) in a python of the user's, its error the last line it wrote. The Python worker's
// script is the package's entry point (worker_program.h starts it).
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "common/expected.h"

namespace minifyd::process {

// The Python worker's entry script: $MINIFYD_PYTHON_WORKER, else the installed one, else the source tree's.
std::string python_worker_script();

// The exit status of a helper of ours that found the disk full (minifyd/repro_file.py's NO_SPACE_EXIT).
inline constexpr int helper_no_space_exit = 73;

// How long a helper of ours (minifyd.MODULE: a repro writer, the plot, the worker's --check) may take.
inline constexpr double helper_timeout_seconds = 600;

// Runs `python ARGUMENTS...` to its end as a bounded helper (helper_process.h): what it wrote to
// standard output; an error holds the last line it wrote to standard error (to standard output when
// it wrote none there), or how it ended, or that it ran past timeout_seconds; `cancel` as run_helper's.
Expected<std::string> run_python(const std::string& python, const std::vector<std::string>& arguments,
                                 double timeout_seconds, const std::function<void()>& clean_up = {},
                                 const std::atomic<bool>* cancel = nullptr);

// What a helper killed at its time limit is told as.
Error helper_timed_out(double timeout_seconds);

// The directory holding the minifyd Python package: the worker script's.
std::string python_package_dir();

// Runs minifyd.MODULE's main() with ARGUMENTS in `python`, the package importable: as run_python.
Expected<std::string> run_python_main(const std::string& python, const std::string& module,
                                      const std::vector<std::string>& arguments, double timeout_seconds,
                                      const std::function<void()>& clean_up = {},
                                      const std::atomic<bool>* cancel = nullptr);

}  // namespace minifyd::process
