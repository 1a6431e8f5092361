// The operator libraries a request names (--op-library, common/operator_library.h), loaded into this
// process: each file opened and checked (owner, mode, SHA-256 against the job's) and loaded through the
// checked descriptor, so a file swapped after the check is never what loads. A library cannot be
// unloaded, so a process that loaded some serves only requests naming the same ones: the fork server
// gives each set its own children (fork_server.h), and a worker serving in its own process retires
// after the request (server.h).
#pragma once

#include <optional>
#include <vector>

#include "common/expected.h"
#include "common/operator_library.h"

namespace minifyd::worker {

class OperatorLibraries {
 public:
  // Loads `libraries` unless they are the ones loaded already. Errors: another set was loaded here (a
  // request the fork server never routes here), a file fails its check (every file is checked before
  // any loads: nothing changes here then), or dlopen refuses it (its words, naming the file), after
  // which this process holds the set still, and answers it with that error.
  Expected<void> require(const std::vector<OperatorLibrary>& libraries);

 private:
  std::optional<std::vector<OperatorLibrary>> loaded_;  // unset until a request names any
  std::optional<Error> failure_;
};

}  // namespace minifyd::worker
