// The job store on PostgreSQL, through libpq.
#include "daemon/service/postgres_job_store.h"

#include <libpq-fe.h>

#include <cstdlib>
#include <iterator>
#include <mutex>
#include <set>
#include <vector>

#include "daemon/service/job_row.h"
#include "daemon/service/postgres_schema.h"

namespace minifyd::service {
namespace {

// The database's clock, in unix seconds: one clock for every host sharing the queue.
#define MINIFYD_PG_NOW "extract(epoch FROM clock_timestamp())::double precision"

struct ResultDeleter {
  void operator()(PGresult* result) const { PQclear(result); }
};
using Result = std::unique_ptr<PGresult, ResultDeleter>;

// A statement's parameter: text, or SQL NULL.
using Parameter = std::optional<std::string>;

std::string text(const PGresult* result, int row, int column) {
  return std::string(PQgetvalue(result, row, column), static_cast<std::size_t>(PQgetlength(result, row, column)));
}
std::int64_t integer(const PGresult* result, int row, int column) {
  return std::strtoll(PQgetvalue(result, row, column), nullptr, 10);
}
// Whether an UPDATE changed no row.
// A row of a libpq result, as job_row.h reads it (libpq gives NULL as "").
class PgRow final : public JobRow {
 public:
  PgRow(const PGresult* result, int row) : result_(result), row_(row) {}
  bool is_null(int column) const override { return PQgetisnull(result_, row_, column) != 0; }
  std::string text(int column) const override { return service::text(result_, row_, column); }
  std::int64_t integer(int column) const override { return service::integer(result_, row_, column); }
  double real(int column) const override { return std::strtod(PQgetvalue(result_, row_, column), nullptr); }
  bool boolean(int column) const override { return text(column) == "t"; }

 private:
  const PGresult* result_;
  int row_;
};

// A connection to the database at `url`; errors in libpq's words, which name the host, never the password.
// Over TCP, a server that stops answering (a partition, a host that died) fails the connection within
// about half a minute (keepalives on an idle connection, tcp_user_timeout on unacknowledged statements)
// instead of after the kernel's retries of many minutes, so that the daemon notices, fences its jobs
// and reconnects. The URL's own parameters come last, so a URL that sets any of these wins.
Expected<PGconn*> connect(const std::string& url) {
  const char* const keywords[] = {"connect_timeout",  "keepalives",       "keepalives_idle", "keepalives_interval",
                                  "keepalives_count", "tcp_user_timeout", "dbname",          nullptr};
  const char* const values[] = {"10", "1", "10", "5", "3", "30000", url.c_str(), nullptr};
  PGconn* raw = PQconnectdbParams(keywords, values, /*expand_dbname=*/1);
  if (raw == nullptr) return make_error(ErrorKind::io, "connecting to the PostgreSQL job queue: out of memory");
  if (PQstatus(raw) != CONNECTION_OK) {
    std::string message = PQerrorMessage(raw);
    PQfinish(raw);
    while (!message.empty() && message.back() == '\n') message.pop_back();
    return make_error(ErrorKind::io, "connecting to the PostgreSQL job queue: " + message);
  }
  return raw;
}

// LISTEN minifyd_jobs on a connection of its own: notifications arrive between statements, and the
// job store's connection runs statements for several threads.
class PostgresQueueChanges final : public QueueChanges {
 public:
  explicit PostgresQueueChanges(PGconn* connection) : connection_(connection) {}
  ~PostgresQueueChanges() override { PQfinish(connection_); }

  int socket() const override { return PQsocket(connection_); }

  Expected<std::vector<JobChange>> read() override {
    if (PQconsumeInput(connection_) == 0 || PQstatus(connection_) == CONNECTION_BAD)
      return make_error(ErrorKind::io, std::string("the PostgreSQL job queue's notifications: ") +
                                           PQerrorMessage(connection_));
    std::vector<JobChange> changes;
    while (PGnotify* notice = PQnotifies(connection_)) {
      std::string payload = notice->extra;
      PQfreemem(notice);
      std::size_t space = payload.find(' ');
      auto state = parse_job_state(payload.substr(0, space));
      if (space == std::string::npos || !state) continue;  // not a job's change (another writer's)
      changes.push_back(JobChange{std::strtoll(payload.c_str() + space + 1, nullptr, 10), *state});
    }
    return changes;
  }

 private:
  PGconn* connection_;
};

}  // namespace

bool is_postgres_url(const std::string& location) {
  return location.rfind("postgresql://", 0) == 0 || location.rfind("postgres://", 0) == 0;
}

// One connection, serialised by a mutex (libpq's connections are not for several threads at once);
// a connection the server or the network broke is reset before the next statement.
class PostgresJobStore::Connection {
 public:
  Connection(PGconn* connection, std::string owner, std::chrono::milliseconds lease)
      : connection_(connection), owner_(std::move(owner)), lease_seconds_(std::to_string(lease.count() / 1000.0)) {
    description_ = std::string("the PostgreSQL job queue ") + PQdb(connection_) + " on " + PQhost(connection_);
  }
  ~Connection() { PQfinish(connection_); }

  const std::string& owner() const { return owner_; }
  // The lease's length, as a statement's parameter.
  const std::string& lease_seconds() const { return lease_seconds_; }
  const std::string& description() const { return description_; }
  std::mutex& mutex() { return mutex_; }

  // Runs `sql` with `parameters` ($1, $2, ...); the caller holds mutex(). An error names what was
  // being done and the server's words.
  Expected<Result> run(const std::string& doing, const char* sql, const std::vector<Parameter>& parameters = {}) {
    if (PQstatus(connection_) == CONNECTION_BAD) PQreset(connection_);
    std::vector<const char*> values;
    for (const Parameter& parameter : parameters) values.push_back(parameter ? parameter->c_str() : nullptr);
    // Without parameters, the simple protocol: a migration is several statements.
    Result result(values.empty() ? PQexec(connection_, sql)
                                 : PQexecParams(connection_, sql, static_cast<int>(values.size()), nullptr,
                                                values.data(), nullptr, nullptr, 0));
    ExecStatusType status = result ? PQresultStatus(result.get()) : PGRES_FATAL_ERROR;
    if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return result;
    const char* state = result ? PQresultErrorField(result.get(), PG_DIAG_SQLSTATE) : nullptr;
    bool full = state != nullptr && std::string(state) == "53100";  // disk_full
    std::string message = result ? PQresultErrorMessage(result.get()) : PQerrorMessage(connection_);
    while (!message.empty() && message.back() == '\n') message.pop_back();
    return make_error(full ? ErrorKind::no_space : ErrorKind::io, description_ + ": " + doing + ": " + message);
  }

 private:
  PGconn* connection_;
  std::string owner_;
  std::string lease_seconds_;
  std::string description_;
  std::mutex mutex_;
};

PostgresJobStore::PostgresJobStore(std::unique_ptr<Connection> connection, std::string url)
    : SqlJobStore("minifyd_jobs"), db_(std::move(connection)), url_(std::move(url)) {}
PostgresJobStore::~PostgresJobStore() = default;

Expected<std::unique_ptr<PostgresJobStore>> PostgresJobStore::open(const std::string& url, std::string owner,
                                                                   std::chrono::milliseconds lease) {
  auto raw = connect(url);
  if (!raw) return raw.error();
  auto connection = std::make_unique<Connection>(*raw, std::move(owner), lease);
  // The schema's upgrade says "already exists, skipping" as a notice; errors and warnings stay.
  if (auto quiet = connection->run("connecting", "SET client_min_messages = warning"); !quiet) return quiet.error();
  auto abort = [&](const Error& error) -> Error {
    (void)connection->run("rolling back", "ROLLBACK");
    return error;
  };
  if (auto begun = connection->run("starting the schema's upgrade", "BEGIN"); !begun) return begun.error();
  if (auto locked = connection->run("locking the schema", postgres_schema_lock); !locked) return abort(locked.error());
  auto created = connection->run("reading the schema's version",
                                 "CREATE TABLE IF NOT EXISTS minifyd_schema (version INTEGER NOT NULL)");
  if (!created) return abort(created.error());
  auto version = connection->run("reading the schema's version", "SELECT max(version) FROM minifyd_schema");
  if (!version) return abort(version.error());
  std::int64_t found = PQgetisnull(version->get(), 0, 0) ? 0 : integer(version->get(), 0, 0);
  if (found > postgres_schema_version)
    return abort(make_error(ErrorKind::unsupported, connection->description() + " has job schema version " +
                                                        std::to_string(found) + ", newer than this minifyd's " +
                                                        std::to_string(postgres_schema_version) + ": run the minifyd that wrote it"));
  for (std::int64_t step = found; step < postgres_schema_version; ++step)
    if (auto upgraded = connection->run("upgrading the schema from version " + std::to_string(step), postgres_migrations[step]);
        !upgraded)
      return abort(upgraded.error());
  if (found < postgres_schema_version) {
    if (auto cleared = connection->run("recording the schema's version", "DELETE FROM minifyd_schema"); !cleared)
      return abort(cleared.error());
    auto recorded = connection->run("recording the schema's version", "INSERT INTO minifyd_schema VALUES ($1)",
                                    {std::to_string(postgres_schema_version)});
    if (!recorded) return abort(recorded.error());
  }
  if (auto committed = connection->run("committing the schema", "COMMIT"); !committed) return committed.error();
  return std::unique_ptr<PostgresJobStore>(new PostgresJobStore(std::move(connection), url));
}

Expected<std::int64_t> PostgresJobStore::submit(const NewJob& job) {
  std::lock_guard<std::mutex> lock(db_->mutex());
  auto inserted = db_->run("recording a job",
                           "INSERT INTO minifyd_jobs (state, priority, graph_name, spec, graph, submitted_at, submitter_uid) "
                           "VALUES ('queued', $1, $2, $3, $4, " MINIFYD_PG_NOW ", $5) RETURNING id",
                           {std::to_string(job.priority), job.graph_name, job.spec_json, job.graph_json,
                            std::to_string(job.submitter_uid)});
  if (!inserted) return inserted.error();
  return integer(inserted->get(), 0, 0);
}

Expected<void> PostgresJobStore::select(const SqlStatement& statement, const RowReader& read) const {
  std::lock_guard<std::mutex> lock(db_->mutex());
  auto selected = db_->run(statement.doing, statement.sql.c_str(), {statement.parameters.begin(), statement.parameters.end()});
  if (!selected) return selected.error();
  for (int row = 0; row < PQntuples(selected->get()); ++row) read(PgRow(selected->get(), row));
  return {};
}

Expected<std::optional<JobRecord>> PostgresJobStore::claim_next(const std::vector<std::int64_t>& running_here) {
  std::lock_guard<std::mutex> lock(db_->mutex());
  // One statement: the row lock taken by the subquery holds until the update and its event commit,
  // and rows other daemons hold are skipped, not waited for.
  std::string sql =
      std::string("WITH claimed AS (UPDATE minifyd_jobs SET state = 'running', sessions = sessions + 1, started_at = "
                  MINIFYD_PG_NOW ", owner = $1, lease_expires_at = " MINIFYD_PG_NOW " + $2::double precision "
                  "WHERE id = (SELECT id FROM minifyd_jobs WHERE (state = 'queued' OR (state = 'running' AND "
                  "lease_expires_at < " MINIFYD_PG_NOW ")) AND NOT (id = ANY($3::bigint[])) "
                  "ORDER BY priority DESC, id LIMIT 1 FOR UPDATE SKIP LOCKED) "
                  "RETURNING *), "
                  "logged AS (INSERT INTO minifyd_job_events (job, at, event, owner, session, lease_expires_at) "
                  "SELECT id, " MINIFYD_PG_NOW ", 'claimed', owner, sessions, lease_expires_at FROM claimed) "
                  "SELECT ") +
      job_record_columns + " FROM claimed";
  std::string excluded = "{";
  for (std::int64_t id : running_here) excluded += (excluded.size() > 1 ? "," : "") + std::to_string(id);
  excluded += "}";
  auto claimed = db_->run("claiming the next job", sql.c_str(), {db_->owner(), db_->lease_seconds(), excluded});
  if (!claimed) return claimed.error();
  if (PQntuples(claimed->get()) == 0) return std::optional<JobRecord>();
  return std::optional<JobRecord>(read_job_record(PgRow(claimed->get(), 0)));
}

Expected<std::size_t> PostgresJobStore::update(const SqlStatement& statement) {
  std::lock_guard<std::mutex> lock(db_->mutex());
  auto updated = db_->run(statement.doing, statement.sql.c_str(), {statement.parameters.begin(), statement.parameters.end()});
  if (!updated) return updated.error();
  return static_cast<std::size_t>(std::strtoull(PQcmdTuples(updated->get()), nullptr, 10));
}

Expected<void> PostgresJobStore::record_end(const JobClaim& claim, const JobEnd& end) {
  std::lock_guard<std::mutex> lock(db_->mutex());
  auto ended = db_->run("finishing " + job_name(claim.id),
                        "WITH ended AS (UPDATE minifyd_jobs SET state = $1, finished_at = " MINIFYD_PG_NOW
                        ", result = $2, error = $3, lease_expires_at = NULL "
                        "WHERE id = $4 AND sessions = $5 AND state = 'running' RETURNING id, owner, sessions), "
                        "logged AS (INSERT INTO minifyd_job_events (job, at, event, owner, session) "
                        "SELECT id, " MINIFYD_PG_NOW ", $1, owner, sessions FROM ended) "
                        "SELECT count(*) FROM ended",
                        {std::string(to_string(end.state)), end.result.empty() ? std::nullopt : Parameter(end.result),
                         end.error, std::to_string(claim.id), std::to_string(claim.session)});
  if (!ended) return ended.error();
  if (integer(ended->get(), 0, 0) == 0) return make_error(ErrorKind::not_found, not_running(claim) + ": not finished");
  return {};
}

Expected<Renewal> PostgresJobStore::renew(const std::vector<JobClaim>& held) {
  if (held.empty()) return Renewal{};
  std::string ids = "{", sessions = "{";
  for (const JobClaim& claim : held) {
    ids += (ids.size() > 1 ? "," : "") + std::to_string(claim.id);
    sessions += (sessions.size() > 1 ? "," : "") + std::to_string(claim.session);
  }
  ids += "}";
  sessions += "}";
  std::lock_guard<std::mutex> lock(db_->mutex());
  auto renewed = db_->run("renewing leases",
                          "WITH renewed AS (UPDATE minifyd_jobs SET lease_expires_at = " MINIFYD_PG_NOW
                          " + $2::double precision WHERE owner = $1 AND state = 'running' AND (id, sessions) IN "
                          "(SELECT * FROM unnest($3::bigint[], $4::integer[])) RETURNING id, sessions, lease_expires_at, "
                          "cancel_requested), "
                          "logged AS (INSERT INTO minifyd_job_events (job, at, event, owner, session, lease_expires_at) "
                          "SELECT id, " MINIFYD_PG_NOW ", 'renewed', $1, sessions, lease_expires_at FROM renewed) "
                          // A claim not renewed is lost unless its job just ended under it.
                          "SELECT held.id, renewed.id IS NOT NULL, renewed.cancel_requested, "
                          "job.sessions = held.session AND job.state IN ('done', 'failed', 'cancelled') "
                          "FROM unnest($3::bigint[], $4::integer[]) AS held (id, session) "
                          "LEFT JOIN renewed ON renewed.id = held.id LEFT JOIN minifyd_jobs AS job ON job.id = held.id",
                          {db_->owner(), db_->lease_seconds(), ids, sessions});
  if (!renewed) return renewed.error();
  Renewal renewal;
  for (int row = 0; row < PQntuples(renewed->get()); ++row) {
    std::int64_t id = integer(renewed->get(), row, 0);
    if (text(renewed->get(), row, 1) != "t") {
      if (text(renewed->get(), row, 3) != "t") renewal.lost.push_back(id);
    } else if (text(renewed->get(), row, 2) == "t") {
      renewal.cancel_requested.push_back(id);
    }
  }
  return renewal;
}

Expected<JobState> PostgresJobStore::request_cancel(std::int64_t id) {
  std::lock_guard<std::mutex> lock(db_->mutex());
  // One statement: whichever state the job is in when it runs decides, even with other daemons
  // claiming or finishing it meanwhile.
  auto cancelled = db_->run("cancelling " + job_name(id),
                            "WITH previous AS (SELECT state FROM minifyd_jobs WHERE id = $1 FOR UPDATE) "
                            "UPDATE minifyd_jobs SET cancel_requested = (previous.state IN ('queued', 'running')) "
                            "OR cancel_requested, "
                            "state = CASE WHEN previous.state = 'queued' THEN 'cancelled' ELSE previous.state END, "
                            "finished_at = CASE WHEN previous.state = 'queued' THEN " MINIFYD_PG_NOW
                            " ELSE finished_at END FROM previous WHERE id = $1 RETURNING previous.state",
                            {std::to_string(id)});
  if (!cancelled) return cancelled.error();
  if (PQntuples(cancelled->get()) == 0) return make_error(ErrorKind::not_found, "no " + job_name(id));
  std::string before = text(cancelled->get(), 0, 0);
  if (before == "queued") return JobState::cancelled;
  if (before == "running") return JobState::running;
  return make_error(ErrorKind::invalid_input, job_name(id) + " is already " + before);
}

Expected<std::size_t> PostgresJobStore::requeue_interrupted() {
  std::lock_guard<std::mutex> lock(db_->mutex());
  auto requeued = db_->run("requeueing interrupted jobs",
                           "WITH requeued AS (UPDATE minifyd_jobs SET state = 'queued', owner = NULL, lease_expires_at = NULL "
                           "WHERE state = 'running' AND owner = $1 RETURNING id, sessions), "
                           "logged AS (INSERT INTO minifyd_job_events (job, at, event, owner, session) "
                           "SELECT id, " MINIFYD_PG_NOW ", 'requeued', $1, sessions FROM requeued) "
                           "SELECT count(*) FROM requeued",
                           {db_->owner()});
  if (!requeued) return requeued.error();
  return static_cast<std::size_t>(integer(requeued->get(), 0, 0));
}

Expected<void> PostgresJobStore::beat(const HostRecord& host) {
  std::lock_guard<std::mutex> lock(db_->mutex());
  auto beaten = db_->run("recording this daemon's heartbeat",
                         "INSERT INTO minifyd_hosts (name, workers, gpus, running_jobs, started_at, heartbeat_at) "
                         "VALUES ($1, $2, $3, $4, $5, " MINIFYD_PG_NOW ") ON CONFLICT (name) DO UPDATE SET "
                         "workers = $2, gpus = $3, running_jobs = $4, started_at = $5, heartbeat_at = " MINIFYD_PG_NOW,
                         {db_->owner(), std::to_string(host.workers), host.gpus, std::to_string(host.running_jobs),
                          std::to_string(host.started_at)});
  if (!beaten) return beaten.error();
  return {};
}

Expected<std::vector<HostRecord>> PostgresJobStore::hosts() const {
  std::lock_guard<std::mutex> lock(db_->mutex());
  auto listed = db_->run("listing the queue's daemons",
                         "SELECT name, workers, gpus, running_jobs, started_at, heartbeat_at FROM minifyd_hosts "
                         "ORDER BY name",
                         {});
  if (!listed) return listed.error();
  std::vector<HostRecord> hosts;
  for (int row = 0; row < PQntuples(listed->get()); ++row)
    hosts.push_back(HostRecord{text(listed->get(), row, 0), static_cast<std::size_t>(integer(listed->get(), row, 1)),
                               text(listed->get(), row, 2), static_cast<std::size_t>(integer(listed->get(), row, 3)),
                               std::strtod(text(listed->get(), row, 4).c_str(), nullptr),
                               std::strtod(text(listed->get(), row, 5).c_str(), nullptr)});
  return hosts;
}

Expected<std::string> PostgresJobStore::shared_store(const std::string& proposed) {
  std::lock_guard<std::mutex> lock(db_->mutex());
  if (!proposed.empty()) {
    auto recorded = db_->run("recording the queue's store",
                             "INSERT INTO minifyd_settings (name, value) VALUES ('store', $1) ON CONFLICT DO NOTHING",
                             {proposed});
    if (!recorded) return recorded.error();
  }
  auto read = db_->run("reading the queue's store", "SELECT value FROM minifyd_settings WHERE name = 'store'", {});
  if (!read) return read.error();
  if (PQntuples(read->get()) == 0)
    return make_error(ErrorKind::invalid_input, db_->description() +
                                                    " names no store yet: give --store, a directory every host mounts");
  std::string store = text(read->get(), 0, 0);
  if (!proposed.empty() && proposed != store)
    return make_error(ErrorKind::invalid_input, "--store " + proposed + ": " + db_->description() +
                                                    " keeps its blobs in " + store + " (every daemon of a queue shares one store)");
  return store;
}

Expected<std::unique_ptr<QueueChanges>> PostgresJobStore::listen() const {
  auto raw = connect(url_);
  if (!raw) return raw.error();
  auto changes = std::make_unique<PostgresQueueChanges>(*raw);
  PGresult* listening = PQexec(*raw, "LISTEN minifyd_jobs");
  bool ok = PQresultStatus(listening) == PGRES_COMMAND_OK;
  PQclear(listening);
  if (!ok)
    return make_error(ErrorKind::io, std::string("listening to the PostgreSQL job queue: ") + PQerrorMessage(*raw));
  return std::unique_ptr<QueueChanges>(std::move(changes));
}

#undef MINIFYD_PG_NOW

}  // namespace minifyd::service
