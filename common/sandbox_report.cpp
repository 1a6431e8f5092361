// Reads the sandbox from /proc/self and the environment.
#include "common/sandbox_report.h"

#include <dirent.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

extern char** environ;

namespace minifyd {

nlohmann::json describe_own_sandbox() {
  nlohmann::json environment = nlohmann::json::array();
  for (char** entry = environ; *entry != nullptr; ++entry) {
    std::string text(*entry);
    environment.push_back(text.substr(0, text.find('=')));
  }
  nlohmann::json fds = nlohmann::json::array();
  if (DIR* dir = ::opendir("/proc/self/fd")) {
    int own = ::dirfd(dir);  // the listing's own descriptor is not part of the sandbox
    while (dirent* entry = ::readdir(dir))
      if (entry->d_name[0] != '.' && std::atoi(entry->d_name) != own) fds.push_back(std::atoi(entry->d_name));
    ::closedir(dir);
  }
  char cwd[4096] = {};
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  return {{"environment", environment},
          {"open_fds", fds},
          {"pgid", ::getpgrp()},
          {"cwd", ::getcwd(cwd, sizeof cwd) ? cwd : ""},
          {"cuda_visible_devices", visible ? nlohmann::json(visible) : nlohmann::json()}};
}

}  // namespace minifyd
