// Reaching the daemon.
#include "daemon/cli/daemon_options.h"

#include <iostream>

#include <nlohmann/json.hpp>

#include "daemon/options/exit_codes.h"
#include "daemon/transport/daemon_location.h"

namespace minifyd::cli {

void DaemonOptions::add_to(CLI::App& command, bool with_json) {
  command.add_option("--state-dir", state_dir, "the daemon's state directory (default: where minifyd puts it)");
  command.add_option("--socket", socket, "the daemon's socket (default: STATE_DIR/minifyd.sock)");
  if (with_json) command.add_flag("--json", json, "print machine-readable JSON");
}

Expected<transport::DaemonClient> DaemonOptions::connect() const {
  transport::DaemonLocation location = transport::locate_daemon(state_dir, socket);
  return transport::DaemonClient::connect(location.socket);
}

int DaemonOptions::fail(const std::string& command, const Error& error) const {
  if (json) std::cout << nlohmann::json{{"error", {{"kind", to_string(error.kind)}, {"message", error.message}}}}.dump() << "\n";
  else std::cerr << "minify " << command << ": " << error.message << "\n";
  // As every command says it: the daemon unreachable (or its reply broken) is 3, a request it
  // refuses as bad input 2, a full disk 5.
  return options::exit_code_of(error);
}

Expected<std::int64_t> submit_job(transport::DaemonClient& client, const run::RunSpec& spec, int priority) {
  auto reply = client.ask(protocol::SubmitRequest{spec.graph_dir, run::encode(spec), priority});
  if (!reply) return reply.error();
  return reply->id;
}

}  // namespace minifyd::cli
