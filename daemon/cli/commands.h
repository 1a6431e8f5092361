// Registration of the subcommands of `minify`, one function per command family.
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

namespace minifyd::cli {

// Each registers its subcommand(s) on app and sets `action` to run when that one is chosen; the
// action returns the process exit code.
using Action = std::function<int()>;

void add_validate_command(CLI::App& app, Action& action);
void add_store_commands(CLI::App& app, Action& action);
void add_query_command(CLI::App& app, Action& action);
void add_bisect_command(CLI::App& app, Action& action);
void add_run_command(CLI::App& app, Action& action);
void add_analyze_command(CLI::App& app, Action& action);
void add_daemon_commands(CLI::App& app, Action& action);
void add_import_command(CLI::App& app, Action& action);
void add_capture_command(CLI::App& app, Action& action);

}  // namespace minifyd::cli
