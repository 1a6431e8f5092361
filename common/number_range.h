// The numbers minifyd takes from outside (command-line options, `minifyd --config` files, requests
// and specs on its socket) and the range each kind may take, in one table: the command lines'
// validators (daemon/cli/number_option.h) and the decoders of requests and specs read it, so that no
// value wraps in a narrower type, overflows a conversion to a duration, or means "forever".
#pragma once

#include <string>
#include <string_view>

#include "common/expected.h"

namespace minifyd {

struct NumberRange {
  double min = 0;
  double max = 0;
  bool integer = false;  // whole numbers only
  const char* unit = "";  // "seconds", "MiB", ... for the error; "" for a count
};

namespace number_ranges {
// A job's priority (a 32-bit int in the job stores); higher runs first.
inline constexpr NumberRange priority{-1'000'000, 1'000'000, true, ""};
// A query's timeout and a repro file's import timeout (--timeout, --import-timeout, timeout_ms).
inline constexpr NumberRange timeout_seconds{0.001, 7 * 86'400, false, "seconds"};
// A run's time budget (--max-time, max_time_seconds): at most a year.
inline constexpr NumberRange max_time_seconds{0.001, 365 * 86'400, false, "seconds"};
// A run's query budget (--max-queries, max_queries).
inline constexpr NumberRange max_queries{1, 1'000'000'000, true, ""};
// Delta debugging's first granularity (--max-granularity, max_granularity).
inline constexpr NumberRange max_granularity{1, 1 << 30, true, ""};
// How long a run waits on a slow candidate before speculating past it (--speculate-after).
inline constexpr NumberRange speculate_after_ms{0, 86'400'000, true, "ms"};
// Worker processes of one pool (--workers, and --gpus times --workers-per-gpu).
inline constexpr NumberRange workers{1, 256, true, ""};
inline constexpr NumberRange workers_per_gpu{1, 64, true, ""};
// Jobs searching at once in one daemon (--max-running-jobs).
inline constexpr NumberRange running_jobs{1, 256, true, ""};
// Jobs waiting in one daemon's queue (--max-queued-jobs).
inline constexpr NumberRange queued_jobs{1, 1'000'000, true, ""};
// A worker's RLIMIT_CPU in seconds and the memory bound (RLIMIT_DATA) of workers and helpers in MiB (0: none).
inline constexpr NumberRange cpu_limit_seconds{0, 31'536'000, true, "seconds"};
inline constexpr NumberRange memory_limit_mb{0, 1 << 30, true, "MiB"};
// A shared queue's lease (minifyd --lease).
inline constexpr NumberRange lease_seconds{0.3, 3'600, false, "seconds"};
// How long a finished job's result stays (minifyd --keep-results), in days (1e-05: 0.864 seconds).
inline constexpr NumberRange keep_results_days{1e-5, 36'500, false, "days"};
}  // namespace number_ranges

// "an integer from 1 to 256", "a number of seconds from 0.001 to 604800": what the range admits.
std::string describe(const NumberRange& range);
// The value, when it is finite, within the range and (for an integer range) whole; else an error
// saying what the range admits.
Expected<double> check_number(double value, const NumberRange& range);
// The whole of `text` read as a number (decimal, or with an exponent) and checked as above.
Expected<double> parse_number(std::string_view text, const NumberRange& range);

}  // namespace minifyd
