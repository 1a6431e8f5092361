// `minify capture [--run | --submit] [--out DIR] -- PROGRAM ARGS...`: runs the user's program with
// minifyd's hook on torch.compile's Inductor (worker/python/capture_site/sitecustomize.py, which
// installs minifyd.capture where MINIFYD_CAPTURE_DIR is set). The hook writes each compiled graph
// as a graph directory DIR/graph-* before its compiled run, with its real inputs and an origin.json
// holding the run's configuration, removes it once it passed, and records in origin.json how it
// failed; so every graph-* left when the program ends is a capture, one without a failure being the
// graph whose run ended the process. Each is then listed, minified here (--run) or queued on
// minifyd (--submit). The program's output and exit status are its own.
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/file_util.h"
#include "daemon/options/exit_codes.h"
#include "daemon/cli/commands.h"
#include "daemon/cli/daemon_options.h"
#include "daemon/cli/graph_input.h"
#include "daemon/options/number_option.h"
#include "daemon/options/pool_options.h"
#include "daemon/cli/run_settings.h"
#include "daemon/cli/search_spec_options.h"
#include "daemon/process/python_helper.h"
#include "protocol/verdict.h"
#include "daemon/run/checkpoint.h"
#include "daemon/run/output_writer.h"
#include "daemon/run/run_summary.h"

extern char** environ;

namespace minifyd::cli {
namespace {

struct CaptureOptions {
  std::vector<std::string> program;  // PROGRAM ARGS...
  std::string out;
  bool run = false;
  bool submit = false;
  SearchSpecOptions search;
  options::PoolOptions pool;
  DaemonOptions daemon;
  int priority = 0;
};

// "minify_capture/YYYYmmdd-HHMMSS-PID": a fresh directory per capture, beside the user's files.
std::filesystem::path default_capture_dir() {
  std::time_t now = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&now));
  return std::filesystem::path("minify_capture") / (std::string(stamp) + "-" + std::to_string(::getpid()));
}

// This process's environment with the hook's variables set: PYTHONPATH led by the hook's directory.
std::vector<std::string> hook_environment(const std::filesystem::path& capture_dir, protocol::AccuracyMode accuracy) {
  std::vector<std::string> variables;
  std::string python_path = process::python_package_dir() + "/capture_site";
  for (char** entry = environ; *entry != nullptr; ++entry) {
    std::string variable(*entry);
    std::string name = variable.substr(0, variable.find('='));
    if (name == "PYTHONPATH") {
      std::string value = variable.substr(name.size() + 1);
      if (!value.empty()) python_path += ":" + value;
    } else if (name != "MINIFYD_CAPTURE_DIR" && name != "MINIFYD_CAPTURE_ACCURACY") {
      variables.push_back(std::move(variable));
    }
  }
  variables.push_back("PYTHONPATH=" + python_path);
  variables.push_back("MINIFYD_CAPTURE_DIR=" + capture_dir.string());
  if (accuracy != protocol::AccuracyMode::off)
    variables.push_back(std::string("MINIFYD_CAPTURE_ACCURACY=") + protocol::to_string(accuracy));
  return variables;
}

// Runs the program to its end with stdio shared, as a shell would: its wait status. Like system(),
// this process ignores SIGINT and SIGQUIT meanwhile, so a ^C reaches the program and ends it alone.
Expected<int> run_program(const std::vector<std::string>& program, const std::vector<std::string>& environment) {
  std::vector<char*> argv, envp;
  for (const std::string& argument : program) argv.push_back(const_cast<char*>(argument.c_str()));
  argv.push_back(nullptr);
  for (const std::string& variable : environment) envp.push_back(const_cast<char*>(variable.c_str()));
  envp.push_back(nullptr);
  struct sigaction ignore {}, old_int {}, old_quit {};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGINT, &ignore, &old_int);
  ::sigaction(SIGQUIT, &ignore, &old_quit);
  posix_spawnattr_t attributes;
  ::posix_spawnattr_init(&attributes);
  sigset_t defaults;
  ::sigemptyset(&defaults);
  ::sigaddset(&defaults, SIGINT);
  ::sigaddset(&defaults, SIGQUIT);
  ::sigaddset(&defaults, SIGPIPE);
  ::posix_spawnattr_setsigdefault(&attributes, &defaults);
  ::posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGDEF);
  pid_t pid = 0;
  int spawned = ::posix_spawnp(&pid, argv[0], nullptr, &attributes, argv.data(), envp.data());
  ::posix_spawnattr_destroy(&attributes);
  int status = 0;
  if (spawned == 0)
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  ::sigaction(SIGINT, &old_int, nullptr);
  ::sigaction(SIGQUIT, &old_quit, nullptr);
  if (spawned != 0) return errno_error("starting " + program.front(), spawned);
  return status;
}

// The shell's convention: the exit status, or 128 + the signal that ended the program.
int exit_code_of_status(int status) { return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status); }

std::string how_it_ended(int status) {
  return WIFSIGNALED(status) ? "killed by signal " + std::to_string(WTERMSIG(status))
                             : "exit status " + std::to_string(WEXITSTATUS(status));
}

std::vector<std::filesystem::path> captured_graphs(const std::filesystem::path& capture_dir) {
  std::vector<std::filesystem::path> graphs;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(capture_dir, error))
    if (entry.is_directory() && entry.path().filename().string().rfind("graph-", 0) == 0) graphs.push_back(entry.path());
  std::sort(graphs.begin(), graphs.end());
  return graphs;
}

// How the captured graph failed, from its origin.json: the hook's record, or the program's end.
std::string failure_of(const std::filesystem::path& graph, int status) {
  auto text = read_file(graph / origin_file_name);
  nlohmann::json origin = text ? nlohmann::json::parse(*text, nullptr, false) : nlohmann::json();
  if (origin.is_object() && origin.contains("failure") && origin["failure"].is_object()) {
    const nlohmann::json& failure = origin["failure"];
    return failure.value("kind", std::string("failure")) + ": " + failure.value("exception", std::string());
  }
  return "its compiled run was in progress when the program ended (" + how_it_ended(status) + ")";
}

void minify_here(const CaptureOptions& options, const std::filesystem::path& graph) {
  std::string prefix = "minify capture: " + graph.string() + ": ";
  auto spec = options.search.spec(graph.string());
  auto settings = spec ? run_settings_of(options.pool, options.search.evaluation, graph / "minified")
                       : Expected<run::RunSettings>(spec.error());
  if (!settings) {
    std::cerr << prefix << settings.error().message << "\n";
    return;
  }
  auto result = run::start_run(*spec, *settings);
  if (!result) {
    std::cerr << prefix << result.error().message << "\n";
  } else if (search::nothing_to_minimize(result->stop)) {
    std::cerr << prefix << run::why_nothing_minimized(*result) << "\n";
  } else {
    std::cerr << prefix << "minimized to " << run::shape_of(result->checkpoint.state).nodes << " nodes in "
              << result->checkpoint.totals.queries << " queries, repro "
              << (settings->out_dir / run::repro_file_name).string() << "\n";
  }
}

void submit_to_daemon(const CaptureOptions& options, const std::vector<std::filesystem::path>& graphs) {
  auto client = options.daemon.connect();
  if (!client) {
    std::cerr << "minify capture: " << client.error().message << "\n";
    return;
  }
  for (const std::filesystem::path& graph : graphs) {
    std::string prefix = "minify capture: " + graph.string() + ": ";
    auto spec = options.search.spec(graph.string());
    auto id = spec ? submit_job(*client, *spec, options.priority) : Expected<std::int64_t>(spec.error());
    if (id) std::cerr << prefix << "submitted job " << *id << "\n";
    else std::cerr << prefix << id.error().message << "\n";
  }
}

int capture(const CaptureOptions& options) {
  if (options.submit)
    if (auto refused = options.search.evaluation.no_sandbox_for_daemon(); !refused) {
      std::cerr << "minify capture: " << refused.error().message << "\n";
      return options::exit_usage;
    }
  std::filesystem::path capture_dir =
      std::filesystem::absolute(options.out.empty() ? default_capture_dir() : std::filesystem::path(options.out));
  std::error_code error;
  std::filesystem::create_directories(capture_dir, error);
  if (error) {
    std::cerr << "minify capture: creating " << capture_dir.string() << ": " << error.message() << "\n";
    return options::exit_usage;
  }
  if (!std::filesystem::is_empty(capture_dir, error)) {
    std::cerr << "minify capture: " << capture_dir.string() << " is not empty\n";
    return options::exit_usage;
  }
  protocol::AccuracyMode accuracy = options.search.evaluation.strict_accuracy ? protocol::AccuracyMode::strict_accuracy
                                    : options.search.evaluation.accuracy      ? protocol::AccuracyMode::accuracy
                                                                              : protocol::AccuracyMode::off;
  auto status = run_program(options.program, hook_environment(capture_dir, accuracy));
  if (!status) {
    std::cerr << "minify capture: " << status.error().message << "\n";
    return options::exit_usage;
  }
  std::vector<std::filesystem::path> graphs = captured_graphs(capture_dir);
  for (const std::filesystem::path& graph : graphs)
    std::cerr << "minify capture: " << graph.string() << ": " << failure_of(graph, *status) << "\n";
  if (graphs.empty()) std::cerr << "minify capture: no graph failed (" << capture_dir.string() << ")\n";
  if (options.run)
    for (const std::filesystem::path& graph : graphs) minify_here(options, graph);
  if (options.submit && !graphs.empty()) submit_to_daemon(options, graphs);
  return exit_code_of_status(*status);
}

}  // namespace

void add_capture_command(CLI::App& app, Action& action) {
  auto options = std::make_shared<CaptureOptions>();
  CLI::App* command = app.add_subcommand(
      "capture", "Run a program with a hook on torch.compile's Inductor that writes each failing graph as a graph "
                 "directory; then minify them (--run) or queue them on minifyd (--submit)");
  command->add_option("program", options->program, "the program and its arguments, after --")->required();
  command->add_option("--out", options->out, "where the captured graphs go (default: minify_capture/TIME-PID)");
  auto* run = command->add_flag("--run", options->run, "minify each captured graph here, into GRAPH/minified");
  command->add_flag("--submit", options->submit, "queue each captured graph on minifyd")->excludes(run);
  options->search.evaluation.backend = "inductor";
  options->search.add_to(*command, /*backend_required=*/false);
  options->pool.add_to(*command);
  options->daemon.add_to(*command, /*with_json=*/false);
  command->add_option("--priority", options->priority, "with --submit: the jobs' priority (default 0)")
      ->check(options::within(number_ranges::priority));
  command->callback([options, &action] { action = [options] { return capture(*options); }; });
}

}  // namespace minifyd::cli
