// Starting and stopping the tests' PostgreSQL server.
#include "tests/support/postgres_server.h"

#include <fcntl.h>
#include <pwd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <stdexcept>
#include <vector>

namespace minifyd::test {
namespace {

const std::filesystem::path bindir = MINIFYD_PG_BINDIR;

// Runs `argv` (as the postgres user when this process is root) and waits; throws unless it exits 0.
// Its chatter on stdout is dropped; its errors reach the test's stderr.
void run(std::vector<std::string> argv) {
  if (::geteuid() == 0) argv.insert(argv.begin(), {"/usr/sbin/runuser", "-u", "postgres", "--"});
  pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    int null = ::open("/dev/null", O_WRONLY);
    if (null >= 0) ::dup2(null, STDOUT_FILENO);
    std::vector<char*> args;
    for (std::string& arg : argv) args.push_back(arg.data());
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
  }
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
  run({(bindir / "initdb").string(), "-D", data, "--auth=trust", "-U", "postgres", "-E", "UTF8", "--no-sync"});
  run({(bindir / "pg_ctl").string(), "-D", data, "-w", "-s", "-l", (dir_ / "server.log").string(), "-o",
       "-c listen_addresses= -c fsync=off -k " + dir_.path().string(), "start"});
}

PostgresServer::~PostgresServer() {
  try {
    run({(bindir / "pg_ctl").string(), "-D", (dir_ / "data").string(), "-w", "-s", "-m", "immediate", "stop"});
  } catch (const std::exception&) {  // removing the directory below ends a server that did not stop
  }
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
