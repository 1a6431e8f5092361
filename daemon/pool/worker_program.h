// Which worker program serves a backend, and how to start it: the C++ minify-worker for eager,
// torchscript and plugins; the Python worker (worker/python/minify_worker.py) in the user's PyTorch
// 2.x for the torch.compile backends. A backend no worker serves is refused here, before any start.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "common/expected.h"
#include "daemon/pool/worker_config.h"

namespace minifyd::pool {

enum class WorkerProgram { native, python };

// The torch.compile backends the Python worker serves (minifyd/compile_backends.py's BACKENDS).
inline const std::vector<std::string> python_backends = {"inductor", "aot_eager", "aot_eager_decomp_partition"};

// The program serving `backend`; an unknown backend is an error listing the known ones.
Expected<WorkerProgram> worker_program_for(const std::string& backend);
// Whether the backend is a torch.compile backend, served by the Python worker (false for an unknown one).
bool is_torch_compile_backend(const std::string& backend);

// How long a query may take unless the user says: 60 s; 600 s for the backends that compile inside
// the query for long in PyTorch itself: the torch.compile ones (Inductor's cold compile of a 1000-node
// graph took over 60 s on a 2-core machine under load) and torchscript, whose fuser compiles in the
// warm-up runs (PyTorch 2.11's NNC took 56 s for the fusion groups of a 998-op elementwise chain on
// an H100, a scripted function's first optimised run in plain PyTorch too). A timeout there would be
// a verdict plain PyTorch does not share.
double default_timeout_seconds(const std::string& backend);

struct WorkerPrograms {
  std::string native;  // --worker: minify-worker; empty: found beside the running executable
  std::string python;  // --python: the interpreter whose torch compiles; empty: find_python()
};

// `programs` with the python found (find_python()) when `backend` is the Python worker's, so that
// whoever starts workers or writes repro.py for it looks for it once.
Expected<WorkerPrograms> with_python_found(const std::string& backend, WorkerPrograms programs);

// `base` (its sandbox and limits) set up to start the program serving `backend`: executable,
// arguments, and the backend its hello must list.
Expected<WorkerConfig> worker_config_for(const std::string& backend, const WorkerPrograms& programs,
                                         WorkerConfig base = {});

// `requested` when given (checked when the worker says hello); otherwise the first of
// $MINIFYD_PYTHON, python3 on PATH, /usr/bin/python3 and scripts/torch2_env.sh's launcher whose
// torch has Inductor, asked by running the worker with --check. The error says what each lacked.
Expected<std::string> find_python(const std::string& requested);

}  // namespace minifyd::pool
