// The job store on SQLite.
#include "daemon/service/sqlite_job_store.h"

#include <sqlite3.h>

#include <chrono>
#include <functional>
#include <iterator>
#include <mutex>

#include <nlohmann/json.hpp>

#include "daemon/service/job_row.h"

namespace minifyd::service {
namespace {

// PRAGMA user_version of the schema below; docs/daemon.md says how it may change.
constexpr int schema_version = 3;

constexpr const char* schema = R"sql(
CREATE TABLE IF NOT EXISTS jobs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  state TEXT NOT NULL,
  priority INTEGER NOT NULL,
  graph_name TEXT NOT NULL,
  spec TEXT NOT NULL,
  graph TEXT NOT NULL,
  submitted_at REAL NOT NULL,
  started_at REAL,
  finished_at REAL,
  sessions INTEGER NOT NULL DEFAULT 0,
  progress TEXT NOT NULL DEFAULT '',
  error TEXT NOT NULL DEFAULT '',
  cancel_requested INTEGER NOT NULL DEFAULT 0,
  checkpoint TEXT,
  result TEXT,
  analysis TEXT,
  submitter_uid INTEGER
);
CREATE INDEX IF NOT EXISTS jobs_queue ON jobs (state, priority DESC, id);
)sql";

// Brings a database of version N (the index) up to N + 1.
constexpr const char* upgrades[] = {
    "",                                              // 0: a new database, made by the schema above
    "ALTER TABLE jobs ADD COLUMN analysis TEXT;",  // 1 → 2: the files of the original's analysis
    "ALTER TABLE jobs ADD COLUMN submitter_uid INTEGER;",  // 2 → 3: who submitted each job
};
static_assert(std::size(upgrades) == schema_version);

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

// One connection, serialised by a mutex: SQLite's own locking is per connection, and the statements
// here take microseconds, so one is enough for the daemon's threads.
struct SqliteJobStore::Connection {
  sqlite3* db = nullptr;
  std::filesystem::path path;
  std::mutex mutex;
  ~Connection() { sqlite3_close(db); }

  Error error(const std::string& doing) const {
    bool full = (sqlite3_extended_errcode(db) & 0xff) == SQLITE_FULL;
    return make_error(full ? ErrorKind::no_space : ErrorKind::io, path.string() + ": " + doing + ": " + sqlite3_errmsg(db));
  }
};

namespace {

// A prepared statement, finalized on destruction.
class Statement final : public JobRow {
 public:
  Statement(sqlite3* db, const char* sql) { status_ = sqlite3_prepare_v2(db, sql, -1, &statement_, nullptr); }
  ~Statement() override { sqlite3_finalize(statement_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  bool prepared() const { return status_ == SQLITE_OK; }
  Statement& bind(int index, std::int64_t value) {
    sqlite3_bind_int64(statement_, index, value);
    return *this;
  }
  Statement& bind(int index, double value) {
    sqlite3_bind_double(statement_, index, value);
    return *this;
  }
  Statement& bind(int index, const std::string& value) {
    sqlite3_bind_text(statement_, index, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Statement& bind(int index, const char* value) { return bind(index, std::string(value)); }
  // SQLITE_ROW, SQLITE_DONE or an error code.
  int step() { return sqlite3_step(statement_); }

  std::int64_t integer(int column) const override { return sqlite3_column_int64(statement_, column); }
  double real(int column) const override { return sqlite3_column_double(statement_, column); }
  bool boolean(int column) const override { return integer(column) != 0; }
  bool is_null(int column) const override { return sqlite3_column_type(statement_, column) == SQLITE_NULL; }
  std::string text(int column) const override {
    const auto* bytes = reinterpret_cast<const char*>(sqlite3_column_text(statement_, column));
    return bytes == nullptr ? std::string() : std::string(bytes, static_cast<std::size_t>(sqlite3_column_bytes(statement_, column)));
  }

 private:
  sqlite3_stmt* statement_ = nullptr;
  int status_;
};

// Runs a statement that changes rows; the number changed, or an error.
Expected<int> change(sqlite3* db, Statement& statement, const std::function<Error(const std::string&)>& error,
                     const std::string& doing) {
  if (!statement.prepared() || statement.step() != SQLITE_DONE) return error(doing);
  return sqlite3_changes(db);
}

Expected<void> execute(sqlite3* db, const char* sql, const std::function<Error(const std::string&)>& error,
                       const std::string& doing) {
  char* message = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &message) == SQLITE_OK) return {};
  sqlite3_free(message);
  return error(doing);
}

}  // namespace

Expected<std::unique_ptr<SqliteJobStore>> SqliteJobStore::open(const std::filesystem::path& database) {
  auto connection = std::make_shared<Connection>();
  connection->path = database;
  if (sqlite3_open_v2(database.c_str(), &connection->db,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, nullptr) != SQLITE_OK)
    return connection->error("opening the job database");
  sqlite3* db = connection->db;
  auto error = [&](const std::string& doing) { return connection->error(doing); };
  sqlite3_busy_timeout(db, 5000);
  std::int64_t found = 0;
  {
    Statement version(db, "PRAGMA user_version");
    if (!version.prepared() || version.step() != SQLITE_ROW)
      return make_error(ErrorKind::corrupt, database.string() + " is not a minifyd job database: " + sqlite3_errmsg(db));
    found = version.integer(0);
  }
  if (found > schema_version)
    return make_error(ErrorKind::unsupported, database.string() + " has job schema version " + std::to_string(found) +
                                                  ", newer than this minifyd's " + std::to_string(schema_version) +
                                                  ": run the minifyd that wrote it");
  // WAL: readers (status, list) never wait for a writer. synchronous=NORMAL: a committed
  // transaction survives the process being killed (the WAL is in the OS's hands); only a power
  // loss may take the last commits back, never leaving the database inconsistent.
  if (auto done = execute(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;", error, "enabling WAL"); !done)
    return make_error(ErrorKind::corrupt, database.string() + " is not a minifyd job database: " + sqlite3_errmsg(db));
  // Each upgrade and its version number in one transaction: a daemon killed half-way finds the
  // database as it was.
  for (std::int64_t version = found; version > 0 && version < schema_version; ++version) {
    std::string upgrade = std::string("BEGIN IMMEDIATE; ") + upgrades[version] +
                          " PRAGMA user_version = " + std::to_string(version + 1) + "; COMMIT;";
    if (auto done = execute(db, upgrade.c_str(), error, "upgrading the schema from version " + std::to_string(version));
        !done) {
      sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
      return done.error();
    }
  }
  // A database at the current version is only read here, so minifyd starts on a full disk.
  if (found == schema_version) return std::unique_ptr<SqliteJobStore>(new SqliteJobStore(std::move(connection)));
  if (auto done = execute(db, schema, error, "creating the schema"); !done) return done.error();
  std::string set_version = "PRAGMA user_version = " + std::to_string(schema_version);
  if (auto done = execute(db, set_version.c_str(), error, "setting the schema version"); !done) return done.error();
  return std::unique_ptr<SqliteJobStore>(new SqliteJobStore(std::move(connection)));
}

Expected<std::int64_t> SqliteJobStore::submit(const NewJob& job) {
  std::lock_guard<std::mutex> lock(db_->mutex);
  Statement insert(db_->db,
                   "INSERT INTO jobs (state, priority, graph_name, spec, graph, submitted_at, submitter_uid) "
                   "VALUES ('queued', ?, ?, ?, ?, ?, ?)");
  insert.bind(1, static_cast<std::int64_t>(job.priority)).bind(2, job.graph_name).bind(3, job.spec_json)
      .bind(4, job.graph_json).bind(5, unix_now()).bind(6, job.submitter_uid);
  auto error = [&](const std::string& doing) { return db_->error(doing); };
  if (auto changed = change(db_->db, insert, error, "recording a job"); !changed) return changed.error();
  return static_cast<std::int64_t>(sqlite3_last_insert_rowid(db_->db));
}

Expected<void> SqliteJobStore::select(const SqlStatement& statement, const RowReader& read) const {
  std::lock_guard<std::mutex> lock(db_->mutex);
  Statement select(db_->db, statement.sql.c_str());
  if (!select.prepared()) return db_->error(statement.doing);
  for (std::size_t i = 0; i < statement.parameters.size(); ++i) select.bind(static_cast<int>(i) + 1, statement.parameters[i]);
  int status;
  while ((status = select.step()) == SQLITE_ROW) read(select);
  if (status != SQLITE_DONE) return db_->error(statement.doing);
  return {};
}

Expected<std::optional<JobRecord>> SqliteJobStore::claim_next(const std::vector<std::int64_t>& running_here) {
  std::int64_t id = 0;
  {
    std::lock_guard<std::mutex> lock(db_->mutex);
    // One statement: the choice and the state change are atomic, so no job is claimed twice.
    Statement claim(db_->db,
                    "UPDATE jobs SET state = 'running', sessions = sessions + 1, started_at = ? WHERE id = "
                    "(SELECT id FROM jobs WHERE state = 'queued' AND id NOT IN (SELECT value FROM json_each(?)) "
                    "ORDER BY priority DESC, id LIMIT 1) RETURNING id");
    claim.bind(1, unix_now()).bind(2, nlohmann::json(running_here).dump());
    int status = claim.prepared() ? claim.step() : SQLITE_ERROR;
    if (status == SQLITE_DONE) return std::optional<JobRecord>();
    if (status != SQLITE_ROW) return db_->error("claiming the next job");
    id = claim.integer(0);
    while (claim.step() == SQLITE_ROW) {
    }
  }
  auto record = get(id);
  if (!record) return record.error();
  return std::optional<JobRecord>(std::move(*record));
}

Expected<std::size_t> SqliteJobStore::update(const SqlStatement& statement) {
  std::lock_guard<std::mutex> lock(db_->mutex);
  Statement update(db_->db, statement.sql.c_str());
  for (std::size_t i = 0; i < statement.parameters.size(); ++i) update.bind(static_cast<int>(i) + 1, statement.parameters[i]);
  auto error = [&](const std::string& what) { return db_->error(what); };
  auto changed = change(db_->db, update, error, statement.doing);
  if (!changed) return changed.error();
  return static_cast<std::size_t>(*changed);
}

Expected<void> SqliteJobStore::record_end(const JobClaim& claim, const JobEnd& end) {
  std::lock_guard<std::mutex> lock(db_->mutex);
  Statement update(db_->db,
                   "UPDATE jobs SET state = ?, finished_at = ?, result = NULLIF(?, ''), error = ? "
                   "WHERE id = ? AND sessions = ? AND state = 'running'");
  update.bind(1, to_string(end.state)).bind(2, unix_now()).bind(3, end.result).bind(4, end.error);
  update.bind(5, claim.id).bind(6, claim.session);
  auto error = [&](const std::string& doing) { return db_->error(doing); };
  auto changed = change(db_->db, update, error, "finishing " + job_name(claim.id));
  if (!changed) return changed.error();
  if (*changed == 0) return make_error(ErrorKind::not_found, not_running(claim) + ": not finished");
  return {};
}

Expected<Renewal> SqliteJobStore::renew(const std::vector<JobClaim>& held) {
  Renewal renewal;
  for (const JobClaim& claim : held) {
    auto job = summary(claim.id);
    if (!job) return job.error();
    // Not lost: a job that just ended under the claim.
    if (job->sessions != claim.session || job->state == JobState::queued) renewal.lost.push_back(claim.id);
    else if (job->state == JobState::running && job->cancel_requested) renewal.cancel_requested.push_back(claim.id);
  }
  return renewal;
}

Expected<JobState> SqliteJobStore::request_cancel(std::int64_t id) {
  std::lock_guard<std::mutex> lock(db_->mutex);
  auto error = [&](const std::string& doing) { return db_->error(doing); };
  Statement queued(db_->db,
                   "UPDATE jobs SET state = 'cancelled', finished_at = ?, cancel_requested = 1 "
                   "WHERE id = ? AND state = 'queued'");
  queued.bind(1, unix_now()).bind(2, id);
  auto changed = change(db_->db, queued, error, "cancelling " + job_name(id));
  if (!changed) return changed.error();
  if (*changed == 1) return JobState::cancelled;
  Statement running(db_->db, "UPDATE jobs SET cancel_requested = 1 WHERE id = ? AND state = 'running'");
  running.bind(1, id);
  changed = change(db_->db, running, error, "cancelling " + job_name(id));
  if (!changed) return changed.error();
  if (*changed == 1) return JobState::running;
  Statement state(db_->db, "SELECT state FROM jobs WHERE id = ?");
  state.bind(1, id);
  int status = state.prepared() ? state.step() : SQLITE_ERROR;
  if (status == SQLITE_DONE) return make_error(ErrorKind::not_found, "no " + job_name(id));
  if (status != SQLITE_ROW) return db_->error("reading " + job_name(id));
  return make_error(ErrorKind::invalid_input, job_name(id) + " is already " + state.text(0));
}

Expected<std::size_t> SqliteJobStore::requeue_interrupted() {
  std::lock_guard<std::mutex> lock(db_->mutex);
  Statement update(db_->db, "UPDATE jobs SET state = 'queued' WHERE state = 'running'");
  auto error = [&](const std::string& doing) { return db_->error(doing); };
  auto changed = change(db_->db, update, error, "requeueing interrupted jobs");
  if (!changed) return changed.error();
  return static_cast<std::size_t>(*changed);
}

}  // namespace minifyd::service
