// How much memory a worker or a helper may allocate: RLIMIT_DATA, which counts a process's heap and
// its private writable mappings (all a runaway allocation takes, `torch.empty` of 20 GiB included)
// but not the address space CUDA reserves for unified addressing, which RLIMIT_AS counts and which
// makes a GPU worker under any RLIMIT_AS fail to initialise CUDA. docs/security.md, "Memory".
#pragma once

#include <cstdint>

namespace minifyd::process {

// Half of this machine's physical memory, in MiB: a worker or helper that asks for more fails its
// allocation (an exception, MemoryError: a verdict or a clear error) before the machine swaps or the
// kernel's OOM killer picks a process, the coordinator among them.
std::uint64_t default_memory_limit_mb();

// Sets RLIMIT_DATA to `mb` MiB (0: no limit); false when setrlimit refused. Async-signal-safe: for a
// child between fork and exec.
bool limit_memory(std::uint64_t mb);

}  // namespace minifyd::process
