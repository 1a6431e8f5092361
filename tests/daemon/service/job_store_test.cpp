// The job store on real SQLite files: order, exclusivity, checkpoints across reopening, the
// transitions, refusal of foreign files, and a process SIGKILLed while writing.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <random>
#include <set>
#include <thread>

#include <sqlite3.h>

#include "daemon/service/job_store.h"
#include "tests/support/temp_dir.h"

using namespace minifyd;
using namespace minifyd::service;

namespace {

NewJob job(int priority = 0, const std::string& name = "graph") {
  return NewJob{R"({"spec":1})", R"({"graph":1})", name, priority};
}

JobStore open_store(const std::filesystem::path& path) {
  auto store = JobStore::open(path);
  REQUIRE(store.has_value());
  return std::move(*store);
}

std::int64_t claim_id(JobStore& store) {
  auto claimed = store.claim_next();
  REQUIRE(claimed.has_value());
  REQUIRE(claimed->has_value());
  return (*claimed)->summary.id;
}

}  // namespace

TEST_CASE("submitted jobs are read back whole and listed in order") {
  test::TempDir dir;
  JobStore store = open_store(dir.path() / "jobs.sqlite");
  auto first = store.submit(job(0, "a"));
  auto second = store.submit(job(3, "b"));
  REQUIRE(first.has_value());
  REQUIRE(second.has_value());
  auto record = store.get(*second);
  REQUIRE(record.has_value());
  CHECK(record->summary.state == JobState::queued);
  CHECK(record->summary.priority == 3);
  CHECK(record->summary.graph_name == "b");
  CHECK(record->spec_json == R"({"spec":1})");
  CHECK(record->graph_json == R"({"graph":1})");
  CHECK_FALSE(record->checkpoint_json.has_value());
  auto listed = store.list();
  REQUIRE(listed.has_value());
  REQUIRE(listed->size() == 2);
  CHECK((*listed)[0].id == *first);
  auto missing = store.get(9999);
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().kind == ErrorKind::not_found);
  CHECK(missing.error().message == "no job 9999");
}

TEST_CASE("claims take the highest priority first, then the oldest") {
  test::TempDir dir;
  JobStore store = open_store(dir.path() / "jobs.sqlite");
  std::int64_t low = *store.submit(job(0));
  std::int64_t high = *store.submit(job(5));
  std::int64_t low_later = *store.submit(job(0));
  std::int64_t high_later = *store.submit(job(5));
  CHECK(claim_id(store) == high);
  CHECK(claim_id(store) == high_later);
  CHECK(claim_id(store) == low);
  CHECK(claim_id(store) == low_later);
  auto none = store.claim_next();
  REQUIRE(none.has_value());
  CHECK_FALSE(none->has_value());
  auto running = store.summary(low);
  CHECK(running->state == JobState::running);
  CHECK(running->sessions == 1);
  CHECK(running->started_at.has_value());
}

TEST_CASE("threads claiming at once never get the same job") {
  test::TempDir dir;
  JobStore store = open_store(dir.path() / "jobs.sqlite");
  for (int i = 0; i < 100; ++i) REQUIRE(store.submit(job()).has_value());
  std::mutex mutex;
  std::multiset<std::int64_t> claimed;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      while (true) {
        auto next = store.claim_next();
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
  test::TempDir dir;
  std::int64_t id;
  {
    JobStore store = open_store(dir.path() / "jobs.sqlite");
    id = *store.submit(job());
    REQUIRE(claim_id(store) == id);
    REQUIRE(store.save_checkpoint(id, R"({"step":1})").has_value());
    REQUIRE(store.save_checkpoint(id, R"({"step":2})").has_value());
  }
  JobStore store = open_store(dir.path() / "jobs.sqlite");
  auto requeued = store.requeue_interrupted();
  REQUIRE(requeued.has_value());
  CHECK(*requeued == 1);
  auto claimed = store.claim_next();
  REQUIRE((claimed.has_value() && claimed->has_value()));
  CHECK((*claimed)->summary.sessions == 2);
  CHECK((*claimed)->checkpoint_json == std::optional<std::string>(R"({"step":2})"));
}

TEST_CASE("a job ends once, and cancel acts by its state") {
  test::TempDir dir;
  JobStore store = open_store(dir.path() / "jobs.sqlite");
  std::int64_t queued = *store.submit(job());
  std::int64_t running = *store.submit(job(9));
  REQUIRE(claim_id(store) == running);
  CHECK(*store.request_cancel(queued) == JobState::cancelled);
  CHECK(*store.request_cancel(running) == JobState::running);
  CHECK(store.summary(running)->cancel_requested);
  REQUIRE(store.finish(running, JobState::done, R"({"nodes":3})").has_value());
  CHECK(*store.get(running)->result_json == R"({"nodes":3})");
  auto again = store.finish(running, JobState::failed, "late");
  REQUIRE_FALSE(again.has_value());
  CHECK(again.error().message.find("job " + std::to_string(running)) != std::string::npos);
  auto final_cancel = store.request_cancel(running);
  REQUIRE_FALSE(final_cancel.has_value());
  CHECK(final_cancel.error().message == "job " + std::to_string(running) + " is already done");
  CHECK_FALSE(store.save_checkpoint(running, "{}").has_value());
  auto counts = store.counts();
  CHECK(counts->done == 1);
  CHECK(counts->cancelled == 1);
}

TEST_CASE("files that are not this minifyd's job database are refused by name") {
  test::TempDir dir;
  std::filesystem::path text = dir.path() / "notes.sqlite";
  std::ofstream(text) << "these are not the jobs you are looking for, padded past a header's size: "
                      << std::string(200, 'x');
  auto refused = JobStore::open(text);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().message.find(text.string()) != std::string::npos);

  std::filesystem::path newer = dir.path() / "newer.sqlite";
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(newer.c_str(), &db) == SQLITE_OK);
  REQUIRE(sqlite3_exec(db, "PRAGMA user_version = 99", nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(db);
  auto future = JobStore::open(newer);
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

  JobStore store = open_store(path);
  auto old = store.get(1);
  REQUIRE(old.has_value());
  CHECK(old->summary.graph_name == "old");
  CHECK_FALSE(old->analysis_json.has_value());
  CHECK_FALSE(store.save_analysis(1, "{}").has_value());  // only while running
  REQUIRE(claim_id(store) == 1);
  REQUIRE(store.save_analysis(1, R"({"analysis.md":"# Analysis"})").has_value());
  CHECK(store.get(1)->analysis_json == std::optional<std::string>(R"({"analysis.md":"# Analysis"})"));

  JobStore reopened = open_store(path);  // version 2 now: nothing to upgrade
  CHECK(reopened.get(1)->analysis_json.has_value());
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  sqlite3_stmt* version = nullptr;
  REQUIRE(sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &version, nullptr) == SQLITE_OK);
  REQUIRE(sqlite3_step(version) == SQLITE_ROW);
  CHECK(sqlite3_column_int(version, 0) == 2);
  sqlite3_finalize(version);
  sqlite3_close(db);
}

TEST_CASE("a writer SIGKILLed mid-write leaves a sound database with every acknowledged job") {
  test::TempDir dir;
  std::filesystem::path path = dir.path() / "jobs.sqlite";
  REQUIRE(JobStore::open(path).has_value());
  int ids[2];
  REQUIRE(::pipe(ids) == 0);
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::close(ids[0]);
    auto store = JobStore::open(path);
    if (!store) ::_exit(2);
    std::string checkpoint(64 * 1024, 'c');
    for (int i = 0;; ++i) {
      auto id = store->submit(job(i % 3));
      if (!id) ::_exit(3);
      if (::write(ids[1], &*id, sizeof *id) != sizeof *id) ::_exit(4);
      if (auto claimed = store->claim_next(); claimed && claimed->has_value())
        (void)store->save_checkpoint((*claimed)->summary.id, checkpoint);
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

  JobStore store = open_store(path);
  auto listed = store.list();
  REQUIRE(listed.has_value());
  std::set<std::int64_t> present;
  for (const JobSummary& summary : *listed) present.insert(summary.id);
  for (std::int64_t acked : acknowledged) CHECK(present.count(acked) == 1);
}
