// Bisectable backends.
#include "daemon/bisect/bisectable.h"

#include "daemon/pool/worker_program.h"

namespace minifyd::bisect {

Expected<void> bisectable_backend(const std::string& backend) {
  auto program = pool::worker_program_for(backend);
  if (!program) return program.error();
  if (*program != pool::WorkerProgram::python)
    return make_error(ErrorKind::invalid_input, "a bisect probes a torch.compile backend's compiler (inductor, aot_eager, "
                                                "aot_eager_decomp_partition); " + backend + " is not one");
  return {};
}

}  // namespace minifyd::bisect
