#include "daemon/run/standby_python.h"

#include <stdlib.h>

#include <chrono>

#include <nlohmann/json.hpp>

#include "common/file_util.h"
#include "daemon/process/python_helper.h"

namespace minifyd::run {
namespace {

constexpr const char* request_name = "request.json";

}  // namespace

StandbyPython::StandbyPython(std::string python) : python_(std::move(python)) {
  std::string pattern = (std::filesystem::temp_directory_path() / "minifyd-standby-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) return;  // run_main says so, and the caller writes without it
  dir_ = pattern;
  // No time limit while it waits: the search may last hours. Its work, once asked, is bounded by run_main.
  running_ = std::async(std::launch::async, [this, request = (dir_ / request_name).string()] {
    return process::run_python_main(python_, "standby", {request}, 0, {}, &unwanted_);
  });
}

StandbyPython::~StandbyPython() {
  if (!asked_) unwanted_ = true;
  if (running_.valid()) running_.wait();
  std::error_code ignored;
  if (!dir_.empty()) std::filesystem::remove_all(dir_, ignored);
}

bool StandbyPython::waiting() const {
  return running_.valid() && !asked_ && running_.wait_for(std::chrono::seconds(0)) != std::future_status::ready;
}

Expected<std::string> StandbyPython::run_main(const std::string& module, const std::vector<std::string>& arguments,
                                              double timeout_seconds) {
  if (!running_.valid() || asked_) return make_error(ErrorKind::io, "no standby python (no private directory)");
  asked_ = true;
  std::string request = nlohmann::json{{"module", module}, {"argv", arguments}}.dump();
  if (auto written = write_file_atomic(dir_ / request_name, request); !written) {
    unwanted_ = true;
    return written.error();
  }
  if (running_.wait_for(std::chrono::duration<double>(timeout_seconds)) != std::future_status::ready) {
    unwanted_ = true;
    running_.wait();
    return process::helper_timed_out(timeout_seconds);
  }
  return running_.get();
}

}  // namespace minifyd::run
