// The default memory bound, from the machine's physical memory, and RLIMIT_DATA.
#include "daemon/process/memory_bound.h"

#include <sys/resource.h>
#include <unistd.h>

namespace minifyd::process {

std::uint64_t default_memory_limit_mb() {
  long pages = ::sysconf(_SC_PHYS_PAGES);
  long page_size = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return 0;  // unknown: no bound rather than a wrong one
  return static_cast<std::uint64_t>(pages) / 2 * static_cast<std::uint64_t>(page_size) / (1024 * 1024);
}

bool limit_memory(std::uint64_t mb) {
  if (mb == 0) return true;
  rlim_t bytes = static_cast<rlim_t>(mb) * 1024 * 1024;
  struct rlimit data {bytes, bytes};
  return ::setrlimit(RLIMIT_DATA, &data) == 0;
}

}  // namespace minifyd::process
