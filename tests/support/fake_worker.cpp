// A deliberately dumb worker for end-to-end tests of the coordinator: it plays a transcript file
// instead of running graphs, so tests get garbage, truncation, oversized lines, crashes and hangs
// on demand. Usage: fake_worker TRANSCRIPT
//
// The transcript is blocks separated by lines "---". The first block is written at start (the
// hello); each request read from stdin then plays the next block; with no blocks left, requests
// get a passing verdict. In a block, "$ID" is replaced by the request's id, and lines starting
// with "!" are directives (a request may also carry its own block, as the backend option "fake"
// with lines separated by ";", which then replaces the next block):
//   !exit N          exit with code N          !signal NAME   raise SEGV, ABRT, KILL, ...
//   !sleep MS        sleep                     !hang          sleep forever, ignoring SIGTERM
//   !stderr TEXT     write TEXT to stderr      !partial TEXT  write TEXT without a newline
//   !oversized N     write N bytes of 'x' and a newline
//   !report          write a hello line describing the sandbox (env names, fds, pgid)
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/sandbox_report.h"

namespace {

std::vector<std::vector<std::string>> read_blocks(const char* path) {
  std::ifstream file(path);
  std::vector<std::vector<std::string>> blocks(1);
  std::string line;
  while (std::getline(file, line)) {
    if (line == "---") blocks.emplace_back();
    else blocks.back().push_back(line);
  }
  return blocks;
}

int signal_number(const std::string& name) {
  for (int signal = 1; signal < NSIG; ++signal)
    if (const char* abbreviation = ::sigabbrev_np(signal); abbreviation && name == abbreviation) return signal;
  return SIGTERM;
}

std::string sandbox_report() {
  return nlohmann::json{{"type", "hello"}, {"protocol", "minifyd.worker"}, {"version", 1}, {"pid", ::getpid()},
                        {"torch_version", "fake"}, {"devices", nlohmann::json::array()},
                        {"sandbox", minifyd::describe_own_sandbox()}}
      .dump();
}

void play(const std::vector<std::string>& block, const std::string& id) {
  for (std::string line : block) {
    for (std::size_t at; (at = line.find("$ID")) != std::string::npos;) line.replace(at, 3, id);
    if (line.rfind("!exit ", 0) == 0) {
      std::cout.flush();
      std::_Exit(std::atoi(line.c_str() + 6));
    } else if (line.rfind("!signal ", 0) == 0) {
      std::cout.flush();
      ::raise(signal_number(line.substr(8)));
    } else if (line.rfind("!sleep ", 0) == 0) {
      std::cout.flush();  // what came before is said before the pause
      ::usleep(static_cast<useconds_t>(std::atoi(line.c_str() + 7)) * 1000);
    } else if (line == "!hang") {
      std::cout.flush();
      ::signal(SIGTERM, SIG_IGN);
      for (;;) ::pause();
    } else if (line.rfind("!stderr ", 0) == 0) {
      std::cerr << line.substr(8) << std::endl;
    } else if (line.rfind("!partial ", 0) == 0) {
      std::cout << line.substr(9) << std::flush;
    } else if (line.rfind("!oversized ", 0) == 0) {
      std::cout << std::string(std::strtoul(line.c_str() + 11, nullptr, 10), 'x') << "\n";
    } else if (line == "!report") {
      std::cout << sandbox_report() << "\n";
    } else {
      std::cout << line << "\n";
    }
  }
  std::cout.flush();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: fake_worker TRANSCRIPT\n";
    return 2;
  }
  auto blocks = read_blocks(argv[1]);
  play(blocks[0], "0");
  std::size_t next = 1;
  std::string request;
  while (std::getline(std::cin, request)) {
    auto message = nlohmann::json::parse(request, nullptr, false);
    std::string id = message.is_object() && message.contains("id") ? message["id"].dump() : "0";
    if (message.is_object() && message.value("type", "") == "shutdown") return 0;
    if (message.is_object() && message.contains("backend_options") && message["backend_options"].contains("fake")) {
      std::vector<std::string> own;
      std::string text = message["backend_options"]["fake"];
      for (std::size_t start = 0, end; start <= text.size(); start = end + 1) {
        end = text.find(';', start);
        if (end == std::string::npos) end = text.size();
        own.push_back(text.substr(start, end - start));
      }
      play(own, id);
    } else if (next < blocks.size()) play(blocks[next++], id);
    else play({R"({"type":"verdict","id":$ID,"verdict":{"status":"pass"}})"}, id);
  }
  return 0;
}
