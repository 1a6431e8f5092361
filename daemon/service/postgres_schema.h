// The PostgreSQL job queue's schema (postgres_job_store.h): its version, the migrations that bring a
// database to it, and the lock that daemons starting at once take to upgrade it once.
#pragma once

#include <iterator>

namespace minifyd::service {

// The rows of minifyd_schema; docs/daemon.md says how it may change. postgres_migrations[N] brings a database
// of version N to N + 1, in the transaction that records N + 1.
inline constexpr int postgres_schema_version = 4;
inline constexpr const char* postgres_migrations[] = {
    R"sql(
CREATE TABLE minifyd_jobs (
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  state TEXT NOT NULL,
  priority INTEGER NOT NULL,
  graph_name TEXT NOT NULL,
  spec TEXT NOT NULL,
  graph TEXT NOT NULL,
  submitted_at DOUBLE PRECISION NOT NULL,
  started_at DOUBLE PRECISION,
  finished_at DOUBLE PRECISION,
  sessions INTEGER NOT NULL DEFAULT 0,
  progress TEXT NOT NULL DEFAULT '',
  error TEXT NOT NULL DEFAULT '',
  cancel_requested BOOLEAN NOT NULL DEFAULT FALSE,
  checkpoint TEXT,
  result TEXT,
  analysis TEXT,
  owner TEXT
);
CREATE INDEX minifyd_jobs_queue ON minifyd_jobs (state, priority DESC, id);
)sql",
    // 1 → 2: leases, and the log of claims that shows no job was ever held by two daemons at once.
    R"sql(
ALTER TABLE minifyd_jobs ADD COLUMN lease_expires_at DOUBLE PRECISION;
CREATE TABLE minifyd_job_events (
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  job BIGINT NOT NULL,
  at DOUBLE PRECISION NOT NULL,
  event TEXT NOT NULL,
  owner TEXT,
  session BIGINT NOT NULL,
  lease_expires_at DOUBLE PRECISION
);
CREATE INDEX minifyd_job_events_job ON minifyd_job_events (job, id);
)sql",
    // 2 → 3: each daemon's heartbeat, for stats; the queue's settings (the shared store); a job's
    // changes notified to the daemons that listen (QueueChanges), "STATE ID".
    R"sql(
CREATE TABLE minifyd_hosts (
  name TEXT PRIMARY KEY,
  workers INTEGER NOT NULL,
  gpus TEXT NOT NULL,
  running_jobs INTEGER NOT NULL,
  started_at DOUBLE PRECISION NOT NULL,
  heartbeat_at DOUBLE PRECISION NOT NULL
);
CREATE TABLE minifyd_settings (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE FUNCTION minifyd_notify_job_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('minifyd_jobs', NEW.state || ' ' || NEW.id);
  RETURN NULL;
END $$;
CREATE TRIGGER minifyd_job_changed AFTER INSERT OR UPDATE OF state, progress, cancel_requested ON minifyd_jobs
  FOR EACH ROW EXECUTE FUNCTION minifyd_notify_job_change();
)sql",
    // 3 → 4: who submitted each job.
    "ALTER TABLE minifyd_jobs ADD COLUMN submitter_uid BIGINT;",
};
static_assert(std::size(postgres_migrations) == postgres_schema_version);

// Held while the schema is read and upgraded, so that daemons starting at once upgrade it once.
inline constexpr const char* postgres_schema_lock = "SELECT pg_advisory_xact_lock(7234612019)";

}  // namespace minifyd::service
