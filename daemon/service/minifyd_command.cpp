// `minifyd`'s command line (docs/daemon.md): its options, the daemon they configure, serving until stopped.
#include "daemon/service/minifyd_command.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <iostream>

#include <CLI/CLI.hpp>

#include "common/log.h"
#include "daemon/options/exit_codes.h"
#include "daemon/options/evaluation_options.h"
#include "daemon/options/number_option.h"
#include "daemon/options/pool_options.h"
#include "daemon/process/install_layout.h"
#include "daemon/pool/worker_executable.h"
#include "daemon/service/daemon.h"
#include "daemon/transport/daemon_location.h"

namespace minifyd::service {
namespace {

struct Options {
  std::string state_dir;
  std::string socket;
  std::string queue;
  std::string store;
  std::string name;
  double lease_seconds = 30;
  options::PoolOptions pool;
  std::size_t max_running_jobs = 2;
  std::size_t max_queued_jobs = 1000;
  std::size_t max_queued_jobs_per_user = 200;
  double keep_results_days = 7;
  std::string worker;
  std::string python;
  process::SandboxLimits sandbox;
  std::string log_level = "info";
};

// --config's file, refused unless it is a regular file: opened without blocking, so that a FIFO
// named there fails at once instead of hanging minifyd before it starts. (CLI11 then reads it.)
CLI::Validator regular_file() {
  return CLI::Validator(
      [](std::string& path) -> std::string {
        int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0) return "'" + path + "': " + std::strerror(errno);
        struct stat status {};
        bool regular = ::fstat(fd, &status) == 0 && S_ISREG(status.st_mode);
        ::close(fd);
        return regular ? std::string() : "'" + path + "' is not a regular file";
      },
      "FILE");
}

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "localhost";
  return name;
}

Expected<DaemonConfig> config_of(const Options& options) {
  DaemonConfig config;
  transport::DaemonLocation location = transport::locate_daemon(options.state_dir, options.socket);
  config.state_dir = location.state_dir;
  config.socket_path = location.socket;
  config.queue = options.queue;
  if (!options.store.empty()) {
    if (!std::filesystem::path(options.store).is_absolute())
      return make_error(ErrorKind::invalid_input, "--store: '" + options.store + "' is not an absolute path");
    config.store_dir = options.store;
  }
  config.name = options.name.empty() ? host_name() + ":" + config.state_dir.string() : options.name;
  config.lease = std::chrono::milliseconds(static_cast<std::int64_t>(options.lease_seconds * 1000));
  auto slots = options.pool.slots();
  if (!slots) return slots.error();
  config.pool.slots = std::move(*slots);
  if (options.worker.empty()) {
    // Without one (a build without LibTorch) the daemon serves the torch.compile backends alone.
    auto found = pool::default_worker_executable();
    if (found) config.pool.worker.executable = *found;
    else config.native_worker_missing = found.error().message;
  } else {
    config.pool.worker.executable = options.worker;
  }
  config.pool.worker.limits = options.sandbox;
  config.python = options.python;
  config.max_running_jobs = options.max_running_jobs;
  config.max_queued_jobs = options.max_queued_jobs;
  config.max_queued_jobs_per_user = options.max_queued_jobs_per_user;
  config.keep_results = std::chrono::milliseconds(static_cast<std::int64_t>(options.keep_results_days * 86'400'000));
  // repro.py of a plugin backend re-runs `minify query`, which lives beside minifyd.
  config.minify_executable = (process::running_executable().parent_path() / "minify").string();
  return config;
}

}  // namespace

int run_minifyd(int argc, char** argv) {
  Options options;
  CLI::App app{"minifyd: the minifier daemon. Serves minify jobs, queries and their results on a Unix socket."};
  app.add_option("--state-dir", options.state_dir,
                 "jobs.sqlite, store/ and the socket (default: $MINIFYD_STATE_DIR, $XDG_STATE_HOME/minifyd or "
                 "~/.local/state/minifyd)");
  app.add_option("--socket", options.socket, "the socket's path (default: STATE_DIR/minifyd.sock)");
  app.add_option("--queue", options.queue,
                 "a postgresql:// URL: the jobs in a queue that the minifyd of several hosts share (default: "
                 "STATE_DIR/jobs.sqlite, this daemon's alone)");
  app.add_option("--store", options.store,
                 "the content store's directory, absolute; a shared queue's daemons share one that every host mounts, "
                 "which the first daemon's --store names (default: the queue's, else STATE_DIR/store)");
  app.add_option("--name", options.name,
                 "this daemon's name in a shared queue, the same at every start (default: HOSTNAME:STATE_DIR)");
  app.add_option("--lease", options.lease_seconds,
                 "seconds a shared queue's job stays this daemon's after its last renewal (renewed every third)")
      ->check(options::within(number_ranges::lease_seconds))
      ->capture_default_str();
  options.pool.add_to(app);
  app.add_option("--max-running-jobs", options.max_running_jobs, "jobs searching at once; the rest wait")
      ->check(options::within(number_ranges::running_jobs))
      ->capture_default_str();
  app.add_option("--max-queued-jobs", options.max_queued_jobs,
                 "jobs waiting in the queue at most; a submit beyond is refused (the queue is full)")
      ->check(options::within(number_ranges::queued_jobs))
      ->capture_default_str();
  app.add_option("--max-queued-jobs-per-user", options.max_queued_jobs_per_user,
                 "jobs of one user (the submitting uid) waiting in the queue at most, through any daemon of a shared "
                 "queue; a submit beyond is refused")
      ->check(options::within(number_ranges::queued_jobs))
      ->capture_default_str();
  app.add_option("--keep-results", options.keep_results_days,
                 "days a finished job's graphs and result stay in the store (fractions too); then they are dropped, "
                 "and the job's result is expired")
      ->check(options::within(number_ranges::keep_results_days))
      ->capture_default_str();
  app.add_option("--worker", options.worker, "the minify-worker executable (default: beside minifyd)");
  app.add_option("--python", options.python,
                 "the python3 whose PyTorch 2.x serves the torch.compile backends (default: found when a job first "
                 "needs it, as minify run finds it)");
  options::add_sandbox_options(app, options.sandbox);
  app.add_option("--log-level", options.log_level, "debug, info, warn, error or off")->capture_default_str();
  // A service's settings in a file (scripts/deploy/minifyd.conf, docs/deploy.md): `name = value` per
  // option, the command line's own values winning; a name no option has is an error, not a silent no-op.
  // Checked as soon as it is parsed, before CLI11 opens it.
  app.set_config("--config", "", "read options from FILE, one `option = value` per line (TOML)")
      ->check(regular_file())
      ->trigger_on_parse();
  app.allow_config_extras(CLI::config_extras_mode::error);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ConfigError& e) {
    // CLI11 says "INI was not able to parse NAME" of a name that is no option: say which file and what.
    std::cerr << "minifyd: --config " << app.get_config_ptr()->as<std::string>() << ": " << e.what()
              << " (each line sets an option of `minifyd --help`, named without its dashes)\n";
    return options::exit_usage;
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? options::exit_ok : options::exit_usage;
  }
  log::Level level;
  if (!log::parse_level(options.log_level, level)) {
    std::cerr << "minifyd: --log-level: unknown level '" << options.log_level << "'\n";
    return options::exit_usage;
  }
  log::set_level(level);
  ::signal(SIGPIPE, SIG_IGN);

  auto config = config_of(options);
  if (!config) {
    std::cerr << "minifyd: " << config.error().message << "\n";
    return options::exit_usage;
  }
  auto daemon = Daemon::open(std::move(*config));
  if (!daemon) {
    std::cerr << "minifyd: " << daemon.error().message << "\n";
    return daemon.error().kind == ErrorKind::io ? options::exit_worker_error : options::exit_usage;
  }
  (*daemon)->serve();
  return options::exit_ok;
}

}  // namespace minifyd::service
