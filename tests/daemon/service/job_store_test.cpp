// The job store on real databases: every behaviour the daemon relies on against SQLite files and a
// PostgreSQL server the test starts (order, exclusivity, checkpoints across reopening, the
// transitions); then each one's own: SQLite's refusal of foreign files, its upgrade and a process
// SIGKILLed while writing; PostgreSQL's daemons sharing one queue.
#include <catch2/catch.hpp>

#include <poll.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include <libpq-fe.h>
#include <sqlite3.h>

#include "daemon/service/postgres_job_store.h"
#include "daemon/service/sqlite_job_store.h"
#include "tests/support/postgres_server.h"
#include "tests/support/temp_dir.h"

using namespace minifyd;
using namespace minifyd::service;

namespace {

NewJob job(int priority = 0, const std::string& name = "graph", std::int64_t submitter_uid = 1000) {
  return NewJob{R"({"spec":1})", R"({"graph":1})", name, priority, submitter_uid};
}

template <class Store>
std::unique_ptr<JobStore> require_open(Expected<std::unique_ptr<Store>> store) {
  REQUIRE(store.has_value());
  return std::move(*store);
}

std::unique_ptr<JobStore> open_store(const std::filesystem::path& path) { return require_open(SqliteJobStore::open(path)); }

// A fresh database of one kind ("sqlite" or "postgresql"); open() again is a daemon's restart.
class Database {
 public:
  explicit Database(std::string kind) : kind_(std::move(kind)) {
    if (kind_ == "postgresql") url_ = test::PostgresServer::shared().create_database();
  }
  // `owner`: the daemon's name in a shared queue, `lease` its claims' (SQLite has one daemon per file).
  std::unique_ptr<JobStore> open(const std::string& owner = "host-a",
                                 std::chrono::milliseconds lease = std::chrono::seconds(60)) const {
    if (kind_ == "sqlite") return open_store(dir_ / "jobs.sqlite");
    return require_open(PostgresJobStore::open(url_, owner, lease));
  }
  const std::string& url() const { return url_; }

 private:
  std::string kind_;
  test::TempDir dir_;
  std::string url_;
};

// Runs `sql` on the database at `url`, as an administrator would.
void execute_sql(const std::string& url, const std::string& sql) {
  PGconn* connection = PQconnectdb(url.c_str());
  REQUIRE(PQstatus(connection) == CONNECTION_OK);
  PGresult* result = PQexec(connection, sql.c_str());
  CHECK(PQresultStatus(result) == PGRES_COMMAND_OK);
  PQclear(result);
  PQfinish(connection);
}

JobClaim claim(JobStore& store) {
  auto claimed = store.claim_next({});
  REQUIRE(claimed.has_value());
  REQUIRE(claimed->has_value());
  return (*claimed)->claim();
}

std::int64_t claim_id(JobStore& store) { return claim(store).id; }

}  // namespace

TEST_CASE("submitted jobs are read back whole and listed in order") {
  std::string kind = GENERATE(as<std::string>{}, "sqlite", "postgresql");
  INFO("the job store on " << kind);
  Database database(kind);
  auto store = database.open();
  auto first = store->submit(job(0, "a"));
  auto second = store->submit(job(3, "b"));
  REQUIRE(first.has_value());
  REQUIRE(second.has_value());
  auto record = store->get(*second);
  REQUIRE(record.has_value());
  CHECK(record->summary.state == JobState::queued);
  CHECK(record->summary.priority == 3);
  CHECK(record->summary.graph_name == "b");
  CHECK(record->spec_json == R"({"spec":1})");
  CHECK(record->graph_json == R"({"graph":1})");
  CHECK_FALSE(record->checkpoint_json.has_value());
  auto listed = store->list();
  REQUIRE(listed.has_value());
  REQUIRE(listed->size() == 2);
  CHECK((*listed)[0].id == *first);
  auto missing = store->get(9999);
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().kind == ErrorKind::not_found);
  CHECK(missing.error().message == "no job 9999");
}

TEST_CASE("each job records its submitter, and the queue counts what each user has waiting") {
  std::string kind = GENERATE(as<std::string>{}, "sqlite", "postgresql");
  INFO("the job store on " << kind);
  Database database(kind);
  auto store = database.open();
  REQUIRE(store->submit(job(0, "a", 1000)).has_value());
  REQUIRE(store->submit(job(0, "b", 1000)).has_value());
  REQUIRE(store->submit(job(0, "c", 4294967294)).has_value());  // uids are unsigned 32-bit: the largest but -1
  CHECK(store->summary(3)->submitter_uid == std::optional<std::int64_t>(4294967294));
  CHECK((*store->list())[0].submitter_uid == std::optional<std::int64_t>(1000));
  CHECK(store->queued_by(1000).value() == 2);
  CHECK(store->queued_by(4294967294).value() == 1);
  CHECK(store->queued_by(7).value() == 0);
  CHECK(claim_id(*store) == 1);  // running: no longer waiting
  CHECK(store->queued_by(1000).value() == 1);
  REQUIRE(store->request_cancel(2).has_value());
  CHECK(store->queued_by(1000).value() == 0);
  CHECK(store->counts()->queued == 1);
}

TEST_CASE("claims take the highest priority first, then the oldest") {
  std::string kind = GENERATE(as<std::string>{}, "sqlite", "postgresql");
  INFO("the job store on " << kind);
  Database database(kind);
  auto store = database.open();
  std::int64_t low = *store->submit(job(0));
  std::int64_t high = *store->submit(job(5));
  std::int64_t low_later = *store->submit(job(0));
  std::int64_t high_later = *store->submit(job(5));
  auto passed_over = store->claim_next({high, high_later});  // jobs this daemon runs are never claimed again
  REQUIRE(passed_over.has_value());
  REQUIRE(passed_over->has_value());
  CHECK((*passed_over)->summary.id == low);
  low = low_later;
  low_later = *store->submit(job(0));
  CHECK(claim_id(*store) == high);
  CHECK(claim_id(*store) == high_later);
  CHECK(claim_id(*store) == low);
  CHECK(claim_id(*store) == low_later);
  auto none = store->claim_next({});
  REQUIRE(none.has_value());
  CHECK_FALSE(none->has_value());
  auto running = store->summary(low);
  CHECK(running->state == JobState::running);
  CHECK(running->sessions == 1);
  CHECK(running->started_at.has_value());
}

TEST_CASE("threads claiming at once never get the same job") {
  std::string kind = GENERATE(as<std::string>{}, "sqlite", "postgresql");
  INFO("the job store on " << kind);
  Database database(kind);
  auto store = database.open();
  for (int i = 0; i < 100; ++i) REQUIRE(store->submit(job()).has_value());
  std::mutex mutex;
  std::multiset<std::int64_t> claimed;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      while (true) {
        auto next = store->claim_next({});
        if (!next || !next->has_value()) return;
        std::lock_guard<std::mutex> lock(mutex);
        claimed.insert((*next)->summary.id);
      }
    });
  for (auto& thread : threads) thread.join();
  CHECK(claimed.size() == 100);
  CHECK(std::set<std::int64_t>(claimed.begin(), claimed.end()).size() == 100);
}

TEST_CASE("a job left running by a dead daemon resumes from its checkpoint") {
  std::string kind = GENERATE(as<std::string>{}, "sqlite", "postgresql");
  INFO("the job store on " << kind);
  Database database(kind);
  JobClaim first;
  {
    auto store = database.open();
    std::int64_t id = *store->submit(job());
    first = claim(*store);
    REQUIRE(first.id == id);
    REQUIRE(store->save_checkpoint(first, R"({"step":1})").has_value());
    REQUIRE(store->save_checkpoint(first, R"({"step":2})").has_value());
  }
  auto store = database.open();
  auto requeued = store->requeue_interrupted();
  REQUIRE(requeued.has_value());
  CHECK(*requeued == 1);
  auto claimed = store->claim_next({});
  REQUIRE((claimed.has_value() && claimed->has_value()));
  CHECK((*claimed)->summary.sessions == 2);
  CHECK((*claimed)->checkpoint_json == std::optional<std::string>(R"({"step":2})"));
  // The first session's writes are refused now: the claim was taken again.
  auto stale = store->save_checkpoint(first, R"({"step":1})");
  REQUIRE_FALSE(stale.has_value());
  CHECK(stale.error().message == "job " + std::to_string(first.id) + " is not running in session 1: checkpoint not saved");
  CHECK_FALSE(store->finish(first, JobState::done, "{}").has_value());
  CHECK_FALSE(store->save_progress(first, "{}").has_value());
  CHECK(store->renew({first})->lost == std::vector<std::int64_t>{first.id});
  CHECK(store->renew({(*claimed)->claim()})->lost.empty());
  CHECK(store->save_checkpoint((*claimed)->claim(), R"({"step":3})").has_value());
}

TEST_CASE("a job ends once, and cancel acts by its state") {
  std::string kind = GENERATE(as<std::string>{}, "sqlite", "postgresql");
  INFO("the job store on " << kind);
  Database database(kind);
  auto store = database.open();
  std::int64_t queued = *store->submit(job());
  std::int64_t running_id = *store->submit(job(9));
  JobClaim running = claim(*store);
  REQUIRE(running.id == running_id);
  CHECK(*store->request_cancel(queued) == JobState::cancelled);
  CHECK(*store->request_cancel(running.id) == JobState::running);
  CHECK(store->summary(running.id)->cancel_requested);
  // The daemon running it learns of the cancel at its next renewal, whichever daemon was asked.
  auto renewal = store->renew({running});
  REQUIRE(renewal.has_value());
  CHECK(renewal->lost.empty());
  CHECK(renewal->cancel_requested == std::vector<std::int64_t>{running.id});
  REQUIRE(store->finish(running, JobState::done, R"({"nodes":3})").has_value());
  CHECK(*store->get(running.id)->result_json == R"({"nodes":3})");
  // Ended under its claim, the job is not lost: its runner, ending too, is not stopped as if taken over.
  CHECK(store->renew({running})->lost.empty());
  auto again = store->finish(running, JobState::failed, "late");
  REQUIRE_FALSE(again.has_value());
  CHECK(again.error().message.find("job " + std::to_string(running.id)) != std::string::npos);
  CHECK(store->save_progress(running, "{}").has_value());  // a finished job's listing shows where it ended
  auto final_cancel = store->request_cancel(running.id);
  REQUIRE_FALSE(final_cancel.has_value());
  CHECK(final_cancel.error().message == "job " + std::to_string(running.id) + " is already done");
  CHECK_FALSE(store->save_checkpoint(running, "{}").has_value());
  auto counts = store->counts();
  CHECK(counts->done == 1);
  CHECK(counts->cancelled == 1);
}

TEST_CASE("files that are not this minifyd's job database are refused by name") {
  test::TempDir dir;
  std::filesystem::path text = dir.path() / "notes.sqlite";
  std::ofstream(text) << "these are not the jobs you are looking for, padded past a header's size: "
                      << std::string(200, 'x');
  auto refused = SqliteJobStore::open(text);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().message.find(text.string()) != std::string::npos);

  std::filesystem::path newer = dir.path() / "newer.sqlite";
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(newer.c_str(), &db) == SQLITE_OK);
  REQUIRE(sqlite3_exec(db, "PRAGMA user_version = 99", nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(db);
  auto future = SqliteJobStore::open(newer);
  REQUIRE_FALSE(future.has_value());
  CHECK(future.error().kind == ErrorKind::unsupported);
  CHECK(future.error().message.find("version 99") != std::string::npos);
}

TEST_CASE("a database of schema version 1 is upgraded in place, its jobs kept, and takes an analysis") {
  test::TempDir dir;
  std::filesystem::path path = dir.path() / "jobs.sqlite";
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  // Version 1's schema, as minifyd wrote it before analyses.
  const char* version_1 = R"sql(
    CREATE TABLE jobs (id INTEGER PRIMARY KEY AUTOINCREMENT, state TEXT NOT NULL, priority INTEGER NOT NULL,
      graph_name TEXT NOT NULL, spec TEXT NOT NULL, graph TEXT NOT NULL, submitted_at REAL NOT NULL, started_at REAL,
      finished_at REAL, sessions INTEGER NOT NULL DEFAULT 0, progress TEXT NOT NULL DEFAULT '',
      error TEXT NOT NULL DEFAULT '', cancel_requested INTEGER NOT NULL DEFAULT 0, checkpoint TEXT, result TEXT);
    INSERT INTO jobs (state, priority, graph_name, spec, graph, submitted_at) VALUES ('queued', 0, 'old', '{}', '{}', 1);
    PRAGMA user_version = 1;)sql";
  REQUIRE(sqlite3_exec(db, version_1, nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(db);

  auto store = open_store(path);
  auto old = store->get(1);
  REQUIRE(old.has_value());
  CHECK(old->summary.graph_name == "old");
  CHECK_FALSE(old->analysis_json.has_value());
  CHECK_FALSE(store->save_analysis(JobClaim{1, 0}, "{}").has_value());  // only while running
  JobClaim claimed = claim(*store);
  REQUIRE(claimed.id == 1);
  REQUIRE(store->save_analysis(claimed, R"({"analysis.md":"# Analysis"})").has_value());
  CHECK(store->get(1)->analysis_json == std::optional<std::string>(R"({"analysis.md":"# Analysis"})"));

  CHECK_FALSE(old->summary.submitter_uid.has_value());  // submitted before submitters were recorded
  CHECK(store->queued_by(0).value() == 0);

  auto reopened = open_store(path);  // version 3 now: nothing to upgrade
  CHECK(reopened->get(1)->analysis_json.has_value());
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  sqlite3_stmt* version = nullptr;
  REQUIRE(sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &version, nullptr) == SQLITE_OK);
  REQUIRE(sqlite3_step(version) == SQLITE_ROW);
  CHECK(sqlite3_column_int(version, 0) == 3);
  sqlite3_finalize(version);
  sqlite3_close(db);
}

TEST_CASE("a writer SIGKILLed mid-write leaves a sound database with every acknowledged job") {
  test::TempDir dir;
  std::filesystem::path path = dir.path() / "jobs.sqlite";
  REQUIRE(SqliteJobStore::open(path).has_value());
  int ids[2];
  REQUIRE(::pipe(ids) == 0);
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::close(ids[0]);
    auto opened = SqliteJobStore::open(path);
    if (!opened) ::_exit(2);
    JobStore& store = **opened;
    std::string checkpoint(64 * 1024, 'c');
    for (int i = 0;; ++i) {
      auto id = store.submit(job(i % 3));
      if (!id) ::_exit(3);
      if (::write(ids[1], &*id, sizeof *id) != sizeof *id) ::_exit(4);
      if (auto claimed = store.claim_next({}); claimed && claimed->has_value())
        (void)store.save_checkpoint((*claimed)->claim(), checkpoint);
    }
  }
  ::close(ids[1]);
  std::mt19937 random(std::random_device{}());
  ::usleep(100'000 + random() % 300'000);
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  std::set<std::int64_t> acknowledged;
  std::int64_t id;
  while (::read(ids[0], &id, sizeof id) == sizeof id) acknowledged.insert(id);
  ::close(ids[0]);
  REQUIRE(acknowledged.size() > 5);

  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  sqlite3_stmt* check = nullptr;
  REQUIRE(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &check, nullptr) == SQLITE_OK);
  REQUIRE(sqlite3_step(check) == SQLITE_ROW);
  CHECK(std::string(reinterpret_cast<const char*>(sqlite3_column_text(check, 0))) == "ok");
  sqlite3_finalize(check);
  sqlite3_close(db);

  auto store = open_store(path);
  auto listed = store->list();
  REQUIRE(listed.has_value());
  std::set<std::int64_t> present;
  for (const JobSummary& summary : *listed) present.insert(summary.id);
  for (std::int64_t acked : acknowledged) CHECK(present.count(acked) == 1);
}

TEST_CASE("daemons sharing a PostgreSQL queue claim different jobs, and a restart requeues only its own") {
  Database database("postgresql");
  std::vector<std::unique_ptr<JobStore>> daemons;
  for (const char* owner : {"host-a", "host-b", "host-c"}) daemons.push_back(database.open(owner));
  for (int i = 0; i < 60; ++i) REQUIRE(daemons[0]->submit(job(i % 3)).has_value());
  std::mutex mutex;
  std::multiset<std::int64_t> claimed;
  std::set<std::int64_t> claimed_by_a;
  std::vector<std::thread> threads;
  for (std::size_t d = 0; d < daemons.size(); ++d)
    threads.emplace_back([&, d] {
      while (true) {
        auto next = daemons[d]->claim_next({});
        if (!next || !next->has_value()) return;
        std::lock_guard<std::mutex> lock(mutex);
        claimed.insert((*next)->summary.id);
        if (d == 0) claimed_by_a.insert((*next)->summary.id);
      }
    });
  for (auto& thread : threads) thread.join();
  CHECK(claimed.size() == 60);
  CHECK(std::set<std::int64_t>(claimed.begin(), claimed.end()).size() == 60);

  daemons[0] = database.open("host-a");  // host-a restarts: its jobs go back to the queue, no one else's
  auto requeued = daemons[0]->requeue_interrupted();
  REQUIRE(requeued.has_value());
  CHECK(*requeued == claimed_by_a.size());
  auto counts = daemons[1]->counts();
  REQUIRE(counts.has_value());
  CHECK(counts->queued == claimed_by_a.size());
  CHECK(counts->running == 60 - claimed_by_a.size());
}

TEST_CASE("a PostgreSQL queue of a newer schema, or no server, is refused with what is wrong") {
  Database database("postgresql");
  {
    auto store = database.open();
    REQUIRE(store->submit(job()).has_value());
  }
  auto again = database.open();  // at the current version: opened as it is, jobs kept
  CHECK(again->counts()->queued == 1);

  // As a later minifyd would leave it.
  execute_sql(database.url(), "UPDATE minifyd_schema SET version = 99");
  auto future = PostgresJobStore::open(database.url(), "host-a", std::chrono::seconds(60));
  REQUIRE_FALSE(future.has_value());
  CHECK(future.error().kind == ErrorKind::unsupported);
  CHECK(future.error().message.find("version 99") != std::string::npos);

  test::TempDir nowhere;
  auto unreachable = PostgresJobStore::open("postgresql:///jobs?host=" + nowhere.path().string() + "&password=hunter2", "host-a",
                                            std::chrono::seconds(60));
  REQUIRE_FALSE(unreachable.has_value());
  CHECK(unreachable.error().kind == ErrorKind::io);
  CHECK(unreachable.error().message.find("connecting to the PostgreSQL job queue") == 0);
  CHECK(unreachable.error().message.find("hunter2") == std::string::npos);
}

// A daemon SIGKILLed, SIGSTOPped or cut off stops renewing: its job's lease runs out, another daemon
// claims it in a new session, and the first one's writes are refused from then on, its renewal says
// the job is lost. The event log shows each claim starting only after the one before it ended.
TEST_CASE("a job whose lease ran out moves to another daemon, and the first one's writes are fenced off") {
  Database database("postgresql");
  auto a = database.open("host-a", std::chrono::milliseconds(600));
  auto b = database.open("host-b", std::chrono::milliseconds(600));
  std::int64_t id = *a->submit(job());
  JobClaim held_by_a = claim(*a);
  CHECK_FALSE(b->claim_next({})->has_value());  // a's lease holds
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  CHECK(a->renew({held_by_a})->lost.empty());
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  CHECK_FALSE(b->claim_next({})->has_value());  // renewed 400 ms ago, for 600 ms
  std::this_thread::sleep_for(std::chrono::milliseconds(400));  // a stops renewing

  // Its lease ran out, but a still runs it: a's own claim passes it over, as the daemon does.
  CHECK_FALSE(a->claim_next({id})->has_value());
  JobClaim held_by_b = claim(*b);
  CHECK(held_by_b.id == id);
  CHECK(held_by_b.session == held_by_a.session + 1);
  CHECK_FALSE(a->save_checkpoint(held_by_a, R"({"from":"a"})").has_value());
  CHECK_FALSE(a->finish(held_by_a, JobState::done, "{}").has_value());
  CHECK(a->renew({held_by_a})->lost == std::vector<std::int64_t>{id});
  REQUIRE(b->save_checkpoint(held_by_b, R"({"from":"b"})").has_value());
  REQUIRE(b->finish(held_by_b, JobState::done, R"({"nodes":3})").has_value());
  CHECK(b->get(id)->checkpoint_json == std::optional<std::string>(R"({"from":"b"})"));

  PGconn* connection = PQconnectdb(database.url().c_str());
  REQUIRE(PQstatus(connection) == CONNECTION_OK);
  PGresult* events = PQexec(connection,
                            "SELECT event, owner, session, at, lease_expires_at FROM minifyd_job_events ORDER BY id");
  REQUIRE(PQresultStatus(events) == PGRES_TUPLES_OK);
  std::vector<std::string> seen;
  double held_until = 0;  // the end of the lease last claimed or renewed
  for (int row = 0; row < PQntuples(events); ++row) {
    std::string event = PQgetvalue(events, row, 0);
    seen.push_back(event + " " + PQgetvalue(events, row, 1) + " " + PQgetvalue(events, row, 2));
    double at = std::strtod(PQgetvalue(events, row, 3), nullptr);
    if (event == "claimed") CHECK(at >= held_until);  // never two live leases
    if (event == "claimed" || event == "renewed") held_until = std::strtod(PQgetvalue(events, row, 4), nullptr);
  }
  PQclear(events);
  PQfinish(connection);
  CHECK(seen == std::vector<std::string>{"claimed host-a 1", "renewed host-a 1", "claimed host-b 2", "done host-b 2"});
}

TEST_CASE("a PostgreSQL queue of schema version 1 is upgraded in place, its jobs kept, and takes leases") {
  Database database("postgresql");
  // Version 1's schema, as minifyd wrote it before leases.
  execute_sql(database.url(), R"sql(
    CREATE TABLE minifyd_schema (version INTEGER NOT NULL);
    INSERT INTO minifyd_schema VALUES (1);
    CREATE TABLE minifyd_jobs (id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, state TEXT NOT NULL,
      priority INTEGER NOT NULL, graph_name TEXT NOT NULL, spec TEXT NOT NULL, graph TEXT NOT NULL,
      submitted_at DOUBLE PRECISION NOT NULL, started_at DOUBLE PRECISION, finished_at DOUBLE PRECISION,
      sessions INTEGER NOT NULL DEFAULT 0, progress TEXT NOT NULL DEFAULT '', error TEXT NOT NULL DEFAULT '',
      cancel_requested BOOLEAN NOT NULL DEFAULT FALSE, checkpoint TEXT, result TEXT, analysis TEXT, owner TEXT);
    CREATE INDEX minifyd_jobs_queue ON minifyd_jobs (state, priority DESC, id);
    INSERT INTO minifyd_jobs (state, priority, graph_name, spec, graph, submitted_at)
      VALUES ('queued', 0, 'old', '{}', '{}', 1);)sql");
  auto store = database.open();
  auto old = store->get(1);
  REQUIRE(old.has_value());
  CHECK(old->summary.graph_name == "old");
  CHECK_FALSE(old->summary.submitter_uid.has_value());
  JobClaim claimed = claim(*store);
  CHECK(claimed.id == 1);
  CHECK(store->renew({claimed})->lost.empty());
  REQUIRE(store->finish(claimed, JobState::done, "{}").has_value());
  auto again = database.open("host-b");  // the current version now: opened as it is
  CHECK(again->counts()->done == 1);
}

// The changes `listening` reads within `within`, polling its socket.
std::vector<JobChange> changes_within(QueueChanges& listening, std::chrono::milliseconds within) {
  std::vector<JobChange> seen;
  auto deadline = std::chrono::steady_clock::now() + within;
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd ready{listening.socket(), POLLIN, 0};
    if (::poll(&ready, 1, 50) <= 0) continue;
    auto read = listening.read();
    REQUIRE(read.has_value());
    seen.insert(seen.end(), read->begin(), read->end());
  }
  return seen;
}

TEST_CASE("a daemon listening to a PostgreSQL queue hears of the jobs the others submit, claim and end") {
  Database database("postgresql");
  auto a = database.open("host-a");
  auto b = database.open("host-b");
  auto listening = a->listen();
  REQUIRE(listening.has_value());
  REQUIRE(*listening != nullptr);
  std::int64_t id = *b->submit(job());
  JobClaim claimed = claim(*b);
  REQUIRE(b->finish(claimed, JobState::done, "{}").has_value());
  auto seen = changes_within(**listening, std::chrono::milliseconds(500));
  std::vector<std::string> states;
  for (const JobChange& change : seen) {
    CHECK(change.id == id);
    states.push_back(to_string(change.state));
  }
  CHECK(states == std::vector<std::string>{"queued", "running", "done"});
  // A renewal changes none of what a listener follows.
  std::int64_t second = *b->submit(job());
  JobClaim held = claim(*b);
  REQUIRE(held.id == second);
  changes_within(**listening, std::chrono::milliseconds(200));
  REQUIRE(b->renew({held}).has_value());
  CHECK(changes_within(**listening, std::chrono::milliseconds(200)).empty());
  // SQLite's daemon is alone with its queue: nothing to listen to.
  test::TempDir dir;
  auto sqlite = SqliteJobStore::open(dir.path() / "jobs.sqlite");
  REQUIRE(sqlite.has_value());
  CHECK(*(*sqlite)->listen() == nullptr);
}

TEST_CASE("a PostgreSQL queue names the store its daemons share: the first daemon's, refusing another") {
  Database database("postgresql");
  auto a = PostgresJobStore::open(database.url(), "host-a", std::chrono::seconds(60));
  auto b = PostgresJobStore::open(database.url(), "host-b", std::chrono::seconds(60));
  REQUIRE((a.has_value() && b.has_value()));
  auto none = (*b)->shared_store("");
  REQUIRE_FALSE(none.has_value());
  CHECK(none.error().message.find("names no store yet: give --store") != std::string::npos);
  CHECK(*(*a)->shared_store("/mnt/minifyd/store") == "/mnt/minifyd/store");
  CHECK(*(*b)->shared_store("") == "/mnt/minifyd/store");
  CHECK(*(*b)->shared_store("/mnt/minifyd/store") == "/mnt/minifyd/store");
  auto other = (*b)->shared_store("/srv/elsewhere");
  REQUIRE_FALSE(other.has_value());
  CHECK(other.error().message.find("--store /srv/elsewhere: ") == 0);
  CHECK(other.error().message.find("keeps its blobs in /mnt/minifyd/store") != std::string::npos);
}

TEST_CASE("each daemon of a PostgreSQL queue records its heartbeat, which stats lists") {
  Database database("postgresql");
  auto a = database.open("host-a");
  auto b = database.open("host-b");
  REQUIRE(a->beat(HostRecord{"ignored", 8, "0,1", 2, 1700000000, 0}).has_value());
  REQUIRE(b->beat(HostRecord{"", 4, "", 0, 1700000500, 0}).has_value());
  auto first = a->hosts();
  REQUIRE(first.has_value());
  REQUIRE(first->size() == 2);
  CHECK((*first)[0].name == "host-a");  // the store's owner, whatever the record names
  CHECK((*first)[0].gpus == "0,1");
  CHECK((*first)[0].running_jobs == 2);
  CHECK((*first)[1].name == "host-b");
  CHECK((*first)[1].workers == 4);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  REQUIRE(a->beat(HostRecord{"", 8, "0,1", 1, 1700000000, 0}).has_value());
  auto second = b->hosts();
  REQUIRE(second.has_value());
  CHECK((*second)[0].running_jobs == 1);
  CHECK((*second)[0].heartbeat_at > (*first)[0].heartbeat_at);
  CHECK((*second)[1].heartbeat_at == (*first)[1].heartbeat_at);
  // One daemon's queue has no one else to show.
  test::TempDir dir;
  auto sqlite = SqliteJobStore::open(dir.path() / "jobs.sqlite");
  REQUIRE(sqlite.has_value());
  REQUIRE((*sqlite)->beat(HostRecord{"", 1, "", 0, 0, 0}).has_value());
  CHECK((*sqlite)->hosts()->empty());
}
