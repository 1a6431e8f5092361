// Running the package's modules, and finding it.
#include "daemon/process/python_helper.h"

#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "daemon/process/helper_process.h"
#include "daemon/process/install_layout.h"

namespace minifyd::process {
namespace {

std::string last_line(const std::string& text) {
  std::istringstream lines(text);
  std::string last, line;
  while (std::getline(lines, line))
    if (!line.empty()) last = line;
  return last;
}

}  // namespace

std::string python_worker_script() {
  if (const char* configured = std::getenv("MINIFYD_PYTHON_WORKER")) return configured;
  if (auto installed = installed_python_worker_script()) return installed->string();
  return MINIFYD_PYTHON_WORKER_SCRIPT;
}

Expected<std::string> run_python(const std::string& python, const std::vector<std::string>& arguments,
                                 double timeout_seconds, const std::function<void()>& clean_up,
                                 const std::atomic<bool>* cancel) {
  std::vector<std::string> command = {python};
  command.insert(command.end(), arguments.begin(), arguments.end());
  auto ran = run_helper(command, timeout_seconds, clean_up, cancel);
  if (!ran) return ran.error().with_context("running " + python);
  if (ran->timed_out) return helper_timed_out(timeout_seconds);
  if (!ran->status.signaled && ran->status.code == 0) return ran->out;
  std::string last = last_line(ran->err);
  if (last.empty()) last = last_line(ran->out);
  bool full = !ran->status.signaled && ran->status.code == helper_no_space_exit;
  return make_error(full ? ErrorKind::no_space : ErrorKind::io, last.empty() ? minifyd::describe(ran->status) : last);
}

Error helper_timed_out(double timeout_seconds) {
  std::ostringstream limit;
  limit << timeout_seconds;
  return make_error(ErrorKind::io, "did not end within " + limit.str() + " s: killed, with every process it started");
}

std::string python_package_dir() { return std::filesystem::path(python_worker_script()).parent_path().string(); }

Expected<std::string> run_python_main(const std::string& python, const std::string& module,
                                      const std::vector<std::string>& arguments, double timeout_seconds,
                                      const std::function<void()>& clean_up, const std::atomic<bool>* cancel) {
  // main()'s status ends the python without the interpreter's teardown, which takes 0.7 s once torch is
  // imported (the outputs' repro.py, written in 10 ms, waited for it): what main() wrote it has closed,
  // its output is flushed here. An exception still ends it the usual way, with its traceback.
  std::vector<std::string> command = {
      "-c", "import os, sys; sys.path.insert(0, sys.argv[1]); del sys.argv[1]; "
            "from minifyd." + module + " import main; status = main() or 0; "
            "sys.stdout.flush(); sys.stderr.flush(); os._exit(status)",
      python_package_dir()};
  command.insert(command.end(), arguments.begin(), arguments.end());
  return run_python(python, command, timeout_seconds, clean_up, cancel);
}

}  // namespace minifyd::process
