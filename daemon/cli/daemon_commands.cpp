// The client commands of minifyd (docs/daemon.md): submit, status, list, watch, result, cancel,
// stats and shutdown. Each connects, sends one request and prints the reply; watch (and submit
// --wait) then follows the job's events to its end.
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <optional>

#include <nlohmann/json.hpp>

#include "common/log.h"
#include "daemon/cli/cli.h"
#include "daemon/cli/commands.h"
#include "daemon/cli/daemon_options.h"
#include "daemon/cli/graph_input.h"
#include "daemon/cli/progress_line.h"
#include "daemon/cli/search_spec_options.h"

namespace minifyd::cli {
namespace {

struct JobOptions {
  DaemonOptions daemon;
  std::int64_t id = 0;
  std::string out;  // result
};

struct SubmitOptions {
  DaemonOptions daemon;
  std::string dir;
  SearchSpecOptions search;
  int priority = 0;
  bool wait = false;
};

// One line about a job, for status and list.
std::string job_line(const nlohmann::json& job) {
  std::string line = "job " + std::to_string(job.value("id", std::int64_t{0})) + "  " + job.value("state", std::string());
  if (job.contains("progress") && job["progress"].is_object()) {
    const nlohmann::json& progress = job["progress"];
    line += "  " + std::to_string(progress.value("nodes", 0)) + "/" + std::to_string(progress.value("start_nodes", 0)) +
            " nodes, " + std::to_string(progress.value("queries", 0)) + " queries";
  }
  if (job.value("priority", 0) != 0) line += "  priority " + std::to_string(job.value("priority", 0));
  if (job.contains("error")) line += "  (" + job.value("error", std::string()) + ")";
  return line + "  " + job.value("graph", std::string());
}

int exit_code_of_state(const std::string& state) { return state == "done" ? exit_ok : exit_failed; }

// Follows a job's events until it ends: a live line on a terminal, else one line per event
// (JSON with --json). Returns the final state.
Expected<std::string> follow(transport::DaemonClient& client, std::int64_t id, bool json) {
  auto watching = client.request(nlohmann::json{{"type", "watch"}, {"job", id}});
  if (!watching) return watching.error();
  bool live = !json && ::isatty(STDERR_FILENO);
  std::optional<ProgressLine> line;
  if (live) line.emplace(stderr);
  std::size_t printed_nodes = 0;  // without a terminal, a line per reduction
  while (true) {
    auto event = client.next_message();
    if (!event) return event.error().with_context("watching job " + std::to_string(id));
    std::string kind = event->value("event", std::string());
    if (json) std::cout << event->dump() << std::endl;
    if (kind == "progress") {
      std::string strategy = event->value("strategy", std::string());
      search::SearchProgress progress{strategy,
                                      event->value("granularity", std::size_t{0}),
                                      event->value("nodes", std::size_t{0}),
                                      event->value("start_nodes", std::size_t{0}),
                                      event->value("queries", std::size_t{0}),
                                      event->value("cache_hits", std::size_t{0})};
      if (line) {
        line->draw(progress, event->value("elapsed_seconds", 0.0));
      } else if (!json && progress.nodes != printed_nodes) {
        printed_nodes = progress.nodes;
        std::cout << "job " << id << ": " << progress.nodes << "/" << progress.start_nodes << " nodes, "
                  << progress.queries << " queries, " << (strategy.empty() ? "checking" : strategy) << std::endl;
      }
    } else if (kind == "end") {
      if (line) line->finish();
      std::string state = event->value("state", std::string());
      if (!json) {
        std::cout << "job " << id << ": " << state;
        if (event->contains("nodes"))
          std::cout << ", " << event->value("start_nodes", 0) << " -> " << event->value("nodes", 0) << " nodes in "
                    << event->value("queries", 0) << " queries";
        if (event->contains("error")) std::cout << ": " << event->value("error", std::string());
        if (event->contains("message")) std::cout << ": " << event->value("message", std::string());
        std::cout << std::endl;
      }
      return state;
    }
  }
}

int submit(const SubmitOptions& options) {
  const char* name = "submit";
  // The daemon copies the graph into its own store while it answers: an import may go with this call.
  std::optional<TemporaryDirectory> imported;
  auto dir = graph_dir_importing_to_temporary(options.dir, options.search.evaluation, imported);
  if (!dir) return options.daemon.fail(name, dir.error());
  auto spec = options.search.spec(dir->string());
  if (!spec) return options.daemon.fail(name, spec.error());
  auto client = options.daemon.connect();
  if (!client) return options.daemon.fail(name, client.error());
  auto id = submit_job(*client, *spec, options.priority);
  if (!id) return options.daemon.fail(name, id.error());
  if (options.daemon.json) std::cout << nlohmann::json{{"id", *id}}.dump() << std::endl;
  else std::cout << *id << std::endl;
  if (!options.wait) return exit_ok;
  auto state = follow(*client, *id, options.daemon.json);
  if (!state) return options.daemon.fail(name, state.error());
  return exit_code_of_state(*state);
}

int status(const JobOptions& options) {
  auto client = options.daemon.connect();
  if (!client) return options.daemon.fail("status", client.error());
  nlohmann::json request{{"type", "status"}};
  if (options.id > 0) request["job"] = options.id;
  auto reply = client->request(request);
  if (!reply) return options.daemon.fail("status", reply.error());
  if (options.id > 0) {
    const nlohmann::json& job = (*reply)["job"];
    if (options.daemon.json) std::cout << job.dump() << "\n";
    else std::cout << job_line(job) << "\n";
    return exit_ok;
  }
  if (options.daemon.json) {
    std::cout << (*reply)["jobs"].dump() << "\n";
    return exit_ok;
  }
  for (const nlohmann::json& job : (*reply)["jobs"]) {
    std::string state = job.value("state", std::string());
    if (state == "queued" || state == "running") std::cout << job_line(job) << "\n";
  }
  return exit_ok;
}

int list(const JobOptions& options) {
  auto client = options.daemon.connect();
  if (!client) return options.daemon.fail("list", client.error());
  auto reply = client->request(nlohmann::json{{"type", "list"}});
  if (!reply) return options.daemon.fail("list", reply.error());
  if (options.daemon.json) std::cout << (*reply)["jobs"].dump() << "\n";
  else
    for (const nlohmann::json& job : (*reply)["jobs"]) std::cout << job_line(job) << "\n";
  return exit_ok;
}

int watch(const JobOptions& options) {
  auto client = options.daemon.connect();
  if (!client) return options.daemon.fail("watch", client.error());
  auto state = follow(*client, options.id, options.daemon.json);
  if (!state) return options.daemon.fail("watch", state.error());
  return exit_code_of_state(*state);
}

int result(const JobOptions& options) {
  auto client = options.daemon.connect();
  if (!client) return options.daemon.fail("result", client.error());
  std::filesystem::path out = std::filesystem::absolute(options.out).lexically_normal();
  auto reply = client->request(nlohmann::json{{"type", "result"}, {"job", options.id}, {"out", out.string()}});
  if (!reply) return options.daemon.fail("result", reply.error());
  if (options.daemon.json) {
    reply->erase("ok");
    std::cout << reply->dump() << "\n";
    return exit_ok;
  }
  std::printf("job %lld: %d -> %d nodes in %d queries (%d crashes contained)\nrepro: %s/repro.py\nreport: %s/report.md\ngraph: %s/graph.json\n",
              static_cast<long long>(options.id), reply->value("start_nodes", 0), reply->value("nodes", 0),
              reply->value("queries", 0), reply->value("crashes_contained", 0), out.c_str(), out.c_str(), out.c_str());
  return exit_ok;
}

// cancel, stats and shutdown: one request, its reply printed as it is.
int simple(const JobOptions& options, const std::string& type) {
  auto client = options.daemon.connect();
  if (!client) return options.daemon.fail(type, client.error());
  nlohmann::json request{{"type", type}};
  if (options.id > 0) request["job"] = options.id;
  auto reply = client->request(request);
  if (!reply) return options.daemon.fail(type, reply.error());
  reply->erase("ok");
  if (options.daemon.json) std::cout << reply->dump() << "\n";
  else if (type == "cancel") std::cout << "job " << options.id << ": " << reply->value("state", std::string()) << "\n";
  else std::cout << reply->dump(2) << "\n";
  return exit_ok;
}

enum class JobArgument { none, optional, required };

void job_command(CLI::App& app, Action& action, const std::string& name, const std::string& help, JobArgument id,
                 std::function<int(const JobOptions&)> run, bool takes_out = false) {
  auto options = std::make_shared<JobOptions>();
  CLI::App* command = app.add_subcommand(name, help);
  if (id == JobArgument::required) command->add_option("id", options->id, "the job's id")->required();
  if (id == JobArgument::optional) command->add_option("id", options->id, "the job's id (default: every active job)");
  if (takes_out) command->add_option("--out", options->out, "the directory to write the result into")->required();
  options->daemon.add_to(*command);
  command->callback([options, &action, run] { action = [options, run] { return run(*options); }; });
}

}  // namespace

void add_daemon_commands(CLI::App& app, Action& action) {
  auto submit_options = std::make_shared<SubmitOptions>();
  CLI::App* submit_command = app.add_subcommand("submit", "Queue a minification job on the daemon; prints its id");
  submit_command->add_option("dir", submit_options->dir, "graph directory (graph.json + store/), or an after_aot repro file (FILE.py)")->required();
  submit_options->search.add_to(*submit_command, /*backend_required=*/true);
  submit_command->add_option("--priority", submit_options->priority, "higher runs first (default 0)");
  submit_command->add_flag("--wait", submit_options->wait, "follow the job until it ends");
  submit_options->daemon.add_to(*submit_command);
  submit_command->callback([submit_options, &action] { action = [submit_options] { return submit(*submit_options); }; });

  job_command(app, action, "status", "A job's state and progress (default: every active job)", JobArgument::optional,
              status);
  job_command(app, action, "list", "Every job the daemon knows", JobArgument::none, list);
  job_command(app, action, "watch", "Follow a job's progress until it ends", JobArgument::required, watch);
  job_command(app, action, "result", "Write a finished job's graph.json, store/, repro.py, report.md and graph.dot",
              JobArgument::required, result, /*takes_out=*/true);
  job_command(app, action, "cancel", "Cancel a queued or running job", JobArgument::required,
              [](const JobOptions& options) { return simple(options, "cancel"); });
  job_command(app, action, "stats", "The daemon's pool, queue, jobs and crashes contained", JobArgument::none,
              [](const JobOptions& options) { return simple(options, "stats"); });
  job_command(app, action, "shutdown", "Stop the daemon gracefully (running jobs resume at its next start)",
              JobArgument::none, [](const JobOptions& options) { return simple(options, "shutdown"); });
}

}  // namespace minifyd::cli
