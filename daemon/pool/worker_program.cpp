// Choosing and locating worker programs.
#include "daemon/pool/worker_program.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <set>

#include <boost/process/search_path.hpp>

#include "daemon/process/python_helper.h"
#include "daemon/pool/worker_executable.h"

namespace minifyd::pool {
namespace {

namespace bp = boost::process;

constexpr std::chrono::milliseconds python_hello_timeout{600'000};

std::string known_backends() {
  std::string names = "eager, torchscript, plugin:PATH.so";
  for (const std::string& name : python_backends) names += ", " + name;
  return names;
}

// Runs `python SCRIPT --check`: empty when its torch serves the backends, else what it said.
std::string check_python(const std::string& python) {
  auto checked = process::run_python(python, {process::python_worker_script(), "--check"}, process::helper_timeout_seconds);
  return checked ? "" : checked.error().message;
}

// scripts/torch2_env.sh's launcher, where that script puts it by default.
std::string torch2_env_launcher() {
  const char* root = std::getenv("MINIFYD_TORCH2_ROOT");
  return std::string(root ? root : "/var/cache/minifyd/torch2-trixie") + ".python3";
}

}  // namespace

Expected<WorkerProgram> worker_program_for(const std::string& backend) {
  if (backend == "eager" || backend == "torchscript" || backend.rfind("plugin:", 0) == 0) return WorkerProgram::native;
  if (std::find(python_backends.begin(), python_backends.end(), backend) != python_backends.end())
    return WorkerProgram::python;
  return make_error(ErrorKind::invalid_input, "unknown backend '" + backend + "' (" + known_backends() + ")");
}

bool is_torch_compile_backend(const std::string& backend) {
  auto program = worker_program_for(backend);
  return program && *program == WorkerProgram::python;
}

double default_timeout_seconds(const std::string& backend) {
  return is_torch_compile_backend(backend) || backend == "torchscript" ? 600 : 60;
}

Expected<std::string> find_python(const std::string& requested) {
  if (!requested.empty()) {
    if (requested.find('/') != std::string::npos) return requested;
    auto on_path = bp::search_path(requested);
    if (on_path.empty()) return make_error(ErrorKind::not_found, "--python " + requested + ": not found on PATH");
    return on_path.string();
  }
  std::vector<std::string> candidates;
  if (const char* configured = std::getenv("MINIFYD_PYTHON")) candidates.emplace_back(configured);
  if (auto on_path = bp::search_path("python3"); !on_path.empty()) candidates.push_back(on_path.string());
  candidates.emplace_back("/usr/bin/python3");
  candidates.push_back(torch2_env_launcher());
  std::string tried;
  std::set<std::string> asked;
  for (const std::string& candidate : candidates) {
    if (!asked.insert(candidate).second) continue;
    std::string problem = ::access(candidate.c_str(), X_OK) == 0 ? check_python(candidate) : "not found";
    if (problem.empty()) return candidate;
    tried += "\n  " + candidate + ": " + problem;
  }
  return make_error(ErrorKind::not_found,
                    "no python3 whose torch has Inductor (PyTorch 2.x) was found; pass --python, or run "
                    "scripts/torch2_env.sh on Debian 12. Tried:" + tried);
}

Expected<WorkerPrograms> with_python_found(const std::string& backend, WorkerPrograms programs) {
  auto program = worker_program_for(backend);
  if (!program) return program.error();
  if (*program != WorkerProgram::python) return programs;
  auto python = find_python(programs.python);
  if (!python) return python.error();
  programs.python = *python;
  return programs;
}

Expected<WorkerConfig> worker_config_for(const std::string& backend, const WorkerPrograms& programs, WorkerConfig base) {
  auto program = worker_program_for(backend);
  if (!program) return program.error();
  base.backend = backend;
  if (*program == WorkerProgram::native) {
    if (!programs.native.empty()) {
      base.executable = programs.native;
      return base;
    }
    auto found = default_worker_executable();
    if (!found) return found.error();
    base.executable = *found;
    return base;
  }
  auto python = find_python(programs.python);
  if (!python) return python.error();
  base.executable = *python;
  base.arguments = {process::python_worker_script()};
  // Importing torch with Dynamo and Inductor takes seconds alone, and took over a minute with a
  // hundred imports at once (sixteen workers for each of eight Inductor scenarios on 16 cores).
  base.hello_timeout = std::max(base.hello_timeout, python_hello_timeout);
  return base;
}

}  // namespace minifyd::pool
