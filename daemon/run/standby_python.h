// A python started ahead of the one helper call it will make (minifyd/standby.py): the outputs'
// repro.py writer, which otherwise starts a fresh python, imports torch and PyTorch's repro writer
// (2 s on a 2-core machine, 4 s on the GPU machine) after the search. Started before the session, it
// has done that by the time the search ends, at the lowest priority (standby.py: the cores go to the
// workers and the plain check first); a run that writes no repro stops it unused.
#pragma once

#include <atomic>
#include <filesystem>
#include <future>
#include <string>
#include <vector>

#include "common/expected.h"

namespace minifyd::run {

class StandbyPython {
 public:
  explicit StandbyPython(std::string python);
  ~StandbyPython();  // stops it if it was not asked, and waits for it
  StandbyPython(const StandbyPython&) = delete;
  StandbyPython& operator=(const StandbyPython&) = delete;

  const std::string& python() const { return python_; }
  // Whether it was started (its private directory made), is still up (it did not fail to import
  // what it waits with) and was not asked yet.
  bool waiting() const;
  // minifyd.MODULE's main() with ARGUMENTS, run by the standby python: as run_python_main, within
  // timeout_seconds from now. Once only; an error when it could not be started or asked.
  Expected<std::string> run_main(const std::string& module, const std::vector<std::string>& arguments,
                                 double timeout_seconds);

 private:
  std::string python_;
  std::filesystem::path dir_;  // private to this process: the request is written there
  std::atomic<bool> unwanted_{false};
  std::future<Expected<std::string>> running_;
  bool asked_ = false;
};

}  // namespace minifyd::run
