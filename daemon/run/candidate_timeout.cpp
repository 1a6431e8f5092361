// The candidates' time limit.
#include "daemon/run/candidate_timeout.h"

#include <algorithm>

namespace minifyd::run {

std::chrono::milliseconds timeout_following_original(std::chrono::milliseconds original,
                                                     std::chrono::milliseconds ceiling) {
  return std::min(ceiling, std::max(timeout_floor, original * timeout_multiple));
}

}  // namespace minifyd::run
