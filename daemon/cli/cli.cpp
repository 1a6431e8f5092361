// Top-level option parsing for `minify`.
#include "daemon/cli/cli.h"

#include <signal.h>

#include <iostream>

#include "common/log.h"
#include "daemon/cli/commands.h"
#include "daemon/options/exit_codes.h"

namespace minifyd::cli {

int run(int argc, char** argv) {
  CLI::App app{"minify: shrink a PyTorch FX graph that breaks a compiler to the smallest graph that "
               "still breaks it the same way"};
  app.require_subcommand(1);
  std::string log_level = "info";
  app.add_option("--log-level", log_level, "debug, info, warn, error or off")->capture_default_str();

  Action action;
  add_validate_command(app, action);
  add_store_commands(app, action);
  add_query_command(app, action);
  add_bisect_command(app, action);
  add_run_command(app, action);
  add_analyze_command(app, action);
  add_daemon_commands(app, action);
  add_import_command(app, action);
  add_capture_command(app, action);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? options::exit_ok : options::exit_usage;
  }
  log::Level level;
  if (!log::parse_level(log_level, level)) {
    std::cerr << "minify: --log-level: unknown level '" << log_level << "'\n";
    return options::exit_usage;
  }
  log::set_level(level);
  // Writing to a worker that just died must be an error value, not the end of the coordinator.
  ::signal(SIGPIPE, SIG_IGN);
  return action();
}

}  // namespace minifyd::cli
