// Starting and stopping the tests' PostgreSQL server.
#include "tests/support/postgres_server.h"

#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <libpq-fe.h>

#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

namespace minifyd::test {
namespace {

const std::filesystem::path bindir = MINIFYD_PG_BINDIR;

// `argv` as the postgres user when this process is root (initdb and postgres refuse root), and
// SIGQUIT (postgres's immediate shutdown) for it when this process dies: a test killed by its
// timeout leaves no server behind.
std::vector<std::string> as_server_user(std::vector<std::string> argv) {
  if (::geteuid() == 0)
    argv.insert(argv.begin(), {"/usr/bin/setpriv", "--reuid=postgres", "--regid=postgres", "--clear-groups",
                               "--pdeathsig=SIGQUIT", "--"});
  return argv;
}

// Starts `argv`, its stdout dropped, its stderr into `log` when given (else the test's stderr).
pid_t spawn(std::vector<std::string> argv, const std::filesystem::path& log = {}) {
  pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGQUIT);  // setpriv sets it again past its change of user
    int null = ::open("/dev/null", O_WRONLY);
    if (null >= 0) ::dup2(null, STDOUT_FILENO);
    int errors = log.empty() ? -1 : ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (errors >= 0) ::dup2(errors, STDERR_FILENO);
    std::vector<char*> args;
    for (std::string& arg : argv) args.push_back(arg.data());
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  return pid;
}

int wait_for(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
  }
  return status;
}

// Runs `argv` to its end; throws unless it exits 0.
void run(const std::vector<std::string>& argv) {
  int status = wait_for(spawn(argv));
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error(argv[0] + " " + (argv.size() > 1 ? argv[1] : "") + " failed");
}

}  // namespace

PostgresServer& PostgresServer::shared() {
  static PostgresServer server;
  return server;
}

PostgresServer::PostgresServer() {
  if (!std::filesystem::exists(bindir / "initdb"))
    throw std::runtime_error("PostgreSQL's initdb not found (MINIFYD_PG_BINDIR '" + bindir.string() +
                             "'): scripts/install_deps.sh installs the postgresql package");
  if (::geteuid() == 0) {
    const passwd* postgres = ::getpwnam("postgres");
    if (postgres == nullptr) throw std::runtime_error("no postgres user (install Debian's postgresql package)");
    if (::chown(dir_.path().c_str(), postgres->pw_uid, postgres->pw_gid) != 0)
      throw std::runtime_error("chown " + dir_.path().string());
  }
  std::string data = (dir_ / "data").string();
  run(as_server_user({(bindir / "initdb").string(), "-D", data, "--auth=trust", "-U", "postgres", "-E", "UTF8",
                      "--no-sync"}));
  server_ = spawn(as_server_user({(bindir / "postgres").string(), "-D", data, "-c", "listen_addresses=", "-c",
                                  "fsync=off", "-k", dir_.path().string()}),
                  dir_ / "server.log");
  std::string ready = "host=" + dir_.path().string() + " user=postgres dbname=postgres";
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (PQping(ready.c_str()) != PQPING_OK) {
    if (std::chrono::steady_clock::now() > deadline || ::waitpid(server_, nullptr, WNOHANG) != 0)
      throw std::runtime_error("the PostgreSQL server in " + dir_.path().string() + " did not start");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

PostgresServer::~PostgresServer() {
  ::kill(server_, SIGQUIT);
  wait_for(server_);
}

std::string PostgresServer::create_database() {
  std::string name = "jobs" + std::to_string(++databases_);
  run({(bindir / "createdb").string(), "-h", dir_.path().string(), "-U", "postgres", name});
  return url(name);
}

std::string PostgresServer::url(const std::string& database) const {
  return "postgresql:///" + database + "?host=" + dir_.path().string() + "&user=postgres";
}

}  // namespace minifyd::test
