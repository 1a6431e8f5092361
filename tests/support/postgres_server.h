// A real PostgreSQL server for one test process: Debian's initdb and postgres (MINIFYD_PG_BINDIR) on
// a scratch directory, listening on a Unix socket there only, stopped and removed at exit, and shut
// down by the kernel if the test dies first. initdb and postgres refuse root: as root, the server
// runs as the `postgres` user the Debian package creates.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>

#include "tests/support/temp_dir.h"

namespace minifyd::test {

class PostgresServer {
 public:
  // The process's server, started at the first call.
  static PostgresServer& shared();
  ~PostgresServer();
  PostgresServer(const PostgresServer&) = delete;
  PostgresServer& operator=(const PostgresServer&) = delete;

  // A new, empty database on the server: its URL.
  std::string create_database();
  // The URL of `database` on the server.
  std::string url(const std::string& database) const;

 private:
  PostgresServer();

  TempDir dir_;
  pid_t server_ = -1;
  int databases_ = 0;
};

}  // namespace minifyd::test
