// The client commands of minifyd (docs/daemon.md): submit, status, list, watch, result, cancel,
// stats and shutdown. Each connects, sends one request and prints the reply; watch (and submit
// --wait) then follows the job's events to its end.
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <optional>

#include <nlohmann/json.hpp>

#include "common/log.h"
#include "daemon/options/exit_codes.h"
#include "daemon/cli/commands.h"
#include "daemon/cli/daemon_options.h"
#include "daemon/cli/graph_input.h"
#include "daemon/options/number_option.h"
#include "daemon/cli/progress_line.h"
#include "daemon/cli/search_spec_options.h"
#include "protocol/daemon_requests.h"

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

// "N/S nodes, Q queries" of a job's last event; nothing before its first, or for an end event
// without the run's summary.
std::string progress_text(const protocol::JobEvent& event) {
  auto text = [](std::size_t nodes, std::size_t start_nodes, std::size_t queries) {
    return std::to_string(nodes) + "/" + std::to_string(start_nodes) + " nodes, " + std::to_string(queries) +
           " queries";
  };
  if (const auto* progress = std::get_if<protocol::ProgressEvent>(&event))
    return text(progress->nodes, progress->start_nodes, progress->queries);
  const auto& summary = std::get<protocol::EndEvent>(event).summary;
  return summary ? text(summary->shape.nodes, summary->start_nodes, summary->totals.queries) : std::string();
}

// One line about a job, for status and list.
std::string job_line(const protocol::JobInfo& job) {
  std::string line = "job " + std::to_string(job.id) + "  " + job.state;
  if (job.progress)
    if (std::string progress = progress_text(*job.progress); !progress.empty()) line += "  " + progress;
  if (job.priority != 0) line += "  priority " + std::to_string(job.priority);
  if (job.error) line += "  (" + *job.error + ")";
  return line + "  " + job.graph;
}

nlohmann::json jobs_json(const std::vector<protocol::JobInfo>& jobs) {
  nlohmann::json array = nlohmann::json::array();
  for (const protocol::JobInfo& job : jobs) array.push_back(protocol::encode(job));
  return array;
}

int exit_code_of_state(const std::string& state) { return state == "done" ? options::exit_ok : options::exit_failed; }

// Follows a job's events until it ends: a live line on a terminal, else one line per event
// (JSON with --json). Returns the final state.
Expected<std::string> follow(transport::DaemonClient& client, std::int64_t id, bool json) {
  auto watching = client.ask(protocol::WatchRequest{id});
  if (!watching) return watching.error();
  bool live = !json && ::isatty(STDERR_FILENO);
  std::optional<ProgressLine> line;
  if (live) line.emplace(stderr);
  std::size_t printed_nodes = 0;  // without a terminal, a line per reduction
  while (true) {
    auto event = client.next_event();
    if (!event) return event.error().with_context("watching job " + std::to_string(id));
    if (json) std::cout << protocol::encode(*event).dump() << std::endl;
    if (const auto* progress = std::get_if<protocol::ProgressEvent>(&*event)) {
      search::SearchProgress figures{progress->strategy, progress->granularity, progress->nodes,
                                     progress->start_nodes, progress->queries,   progress->cache_hits};
      if (line) {
        line->draw(figures, progress->elapsed_seconds);
      } else if (!json && progress->nodes != printed_nodes) {
        printed_nodes = progress->nodes;
        std::cout << "job " << id << ": " << progress->nodes << "/" << progress->start_nodes << " nodes, "
                  << progress->queries << " queries, " << (progress->strategy.empty() ? "checking" : progress->strategy)
                  << std::endl;
      }
      continue;
    }
    const auto& end = std::get<protocol::EndEvent>(*event);
    if (line) line->finish();
    if (!json) {
      std::cout << "job " << id << ": " << end.state;
      if (end.summary)
        std::cout << ", " << end.summary->start_nodes << " -> " << end.summary->shape.nodes << " nodes in "
                  << end.summary->totals.queries << " queries";
      if (end.error) std::cout << ": " << *end.error;
      if (end.message) std::cout << ": " << *end.message;
      std::cout << std::endl;
    }
    return end.state;
  }
}

// Sends `request` and prints its reply: as JSON with --json, else as `text` does.
template <class Request, class Text>
int request_and_print(const DaemonOptions& daemon, const Request& request, Text text) {
  auto client = daemon.connect();
  if (!client) return daemon.fail(Request::type, client.error());
  auto reply = client->ask(request);
  if (!reply) return daemon.fail(Request::type, reply.error());
  if (daemon.json) std::cout << protocol::encode(*reply).dump() << "\n";
  else text(*reply);
  return options::exit_ok;
}

int submit(const SubmitOptions& options) {
  const char* name = "submit";
  if (auto refused = options.search.evaluation.no_sandbox_for_daemon(); !refused)
    return options.daemon.fail(name, refused.error());
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
  if (options.daemon.json) std::cout << protocol::encode(protocol::SubmitReply{*id}).dump() << std::endl;
  else std::cout << *id << std::endl;
  if (!options.wait) return options::exit_ok;
  auto state = follow(*client, *id, options.daemon.json);
  if (!state) return options.daemon.fail(name, state.error());
  return exit_code_of_state(*state);
}

int status(const JobOptions& options) {
  auto client = options.daemon.connect();
  if (!client) return options.daemon.fail("status", client.error());
  protocol::StatusRequest request;
  if (options.id > 0) request.job = options.id;
  auto reply = client->ask(request);
  if (!reply) return options.daemon.fail("status", reply.error());
  if (reply->job) {
    if (options.daemon.json) std::cout << protocol::encode(*reply->job).dump() << "\n";
    else std::cout << job_line(*reply->job) << "\n";
    return options::exit_ok;
  }
  if (options.daemon.json) {
    std::cout << jobs_json(reply->jobs).dump() << "\n";
    return options::exit_ok;
  }
  for (const protocol::JobInfo& job : reply->jobs)
    if (job.state == "queued" || job.state == "running") std::cout << job_line(job) << "\n";
  return options::exit_ok;
}

int list(const JobOptions& options) {
  auto client = options.daemon.connect();
  if (!client) return options.daemon.fail("list", client.error());
  auto reply = client->ask(protocol::ListRequest{});
  if (!reply) return options.daemon.fail("list", reply.error());
  if (options.daemon.json) std::cout << jobs_json(reply->jobs).dump() << "\n";
  else
    for (const protocol::JobInfo& job : reply->jobs) std::cout << job_line(job) << "\n";
  return options::exit_ok;
}

int watch(const JobOptions& options) {
  auto client = options.daemon.connect();
  if (!client) return options.daemon.fail("watch", client.error());
  auto state = follow(*client, options.id, options.daemon.json);
  if (!state) return options.daemon.fail("watch", state.error());
  return exit_code_of_state(*state);
}

int result(const JobOptions& options) {
  std::filesystem::path out = std::filesystem::absolute(options.out).lexically_normal();
  return request_and_print(options.daemon, protocol::ResultRequest{options.id, out.string()},
                           [&](const protocol::ResultReply& reply) {
                             const protocol::RunSummary& summary = reply.summary;
                             std::printf("job %lld: %zu -> %zu nodes in %llu queries (%llu crashes contained)\n"
                                         "repro: %s/repro.py\nreport: %s/report.md\ngraph: %s/graph.json\n",
                                         static_cast<long long>(options.id), summary.start_nodes,
                                         summary.shape.nodes, static_cast<unsigned long long>(summary.totals.queries),
                                         static_cast<unsigned long long>(summary.totals.crashes_contained),
                                         out.c_str(), out.c_str(), out.c_str());
                           });
}

int cancel(const JobOptions& options) {
  return request_and_print(options.daemon, protocol::CancelJobRequest{options.id},
                           [&](const protocol::CancelJobReply& reply) {
                             std::cout << "job " << reply.job << ": " << reply.state << "\n";
                           });
}

// stats and shutdown: their reply, indented.
template <class Request>
int print_indented(const JobOptions& options) {
  return request_and_print(options.daemon, Request{},
                           [](const auto& reply) { std::cout << protocol::encode(reply).dump(2) << "\n"; });
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
  add_graph_argument(*submit_command, submit_options->dir)->required();
  submit_options->search.add_to(*submit_command, /*backend_required=*/true);
  submit_command->add_option("--priority", submit_options->priority, "higher runs first (default 0)")
      ->check(options::within(number_ranges::priority));
  submit_command->add_flag("--wait", submit_options->wait, "follow the job until it ends");
  submit_options->daemon.add_to(*submit_command);
  submit_command->callback([submit_options, &action] { action = [submit_options] { return submit(*submit_options); }; });

  job_command(app, action, "status", "A job's state and progress (default: every active job)", JobArgument::optional,
              status);
  job_command(app, action, "list", "Every job the daemon knows", JobArgument::none, list);
  job_command(app, action, "watch", "Follow a job's progress until it ends", JobArgument::required, watch);
  job_command(app, action, "result", "Write a finished job's graph.json, store/, repro.py, report.md and graph.dot",
              JobArgument::required, result, /*takes_out=*/true);
  job_command(app, action, "cancel", "Cancel a queued or running job", JobArgument::required, cancel);
  job_command(app, action, "stats", "The daemon's pool, queue, jobs and crashes contained", JobArgument::none,
              print_indented<protocol::StatsRequest>);
  job_command(app, action, "shutdown", "Stop the daemon gracefully (running jobs resume at its next start)",
              JobArgument::none, print_indented<protocol::DaemonShutdownRequest>);
}

}  // namespace minifyd::cli
