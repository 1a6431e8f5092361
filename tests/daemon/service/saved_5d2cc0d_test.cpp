// The files 5d2cc0d (the last release) wrote, read by this one: a daemon job's spec, result and
// checkpoint as its jobs.sqlite held them, and the checkpoint.json of a `minify run` killed after its
// second accepted reduction (tests/run/test_run.py's saved_5d2cc0d resumes it). They were made with
// 5d2cc0d's minify and minifyd on tests/run/cases.py's has_add_mul-like NaN chain: 60 rounds of
// sin(x) + 1, then zero / zero (124 nodes), --backend eager --nan, a job with --no-prefix-bisection
// --shrink-inputs.
#include <catch2/catch.hpp>

#include "common/file_util.h"
#include "daemon/run/checkpoint.h"
#include "daemon/service/job_result.h"
#include "daemon/service/job_spec.h"

using namespace minifyd;

namespace {

const std::filesystem::path saved = MINIFYD_SAVED_5D2CC0D;

std::string saved_text(const std::string& name) {
  auto text = read_file(saved / name);
  REQUIRE(text.has_value());
  return *text;
}

run::Checkpoint saved_checkpoint(const std::string& name) {
  auto json = parse_json(saved_text(name));
  REQUIRE(json.has_value());
  auto checkpoint = run::decode_checkpoint(*json);
  INFO((checkpoint.has_value() ? std::string() : checkpoint.error().message));
  REQUIRE(checkpoint.has_value());
  return std::move(*checkpoint);
}

}  // namespace

TEST_CASE("5d2cc0d's job spec reads as version 0, and is written back as version 1 with the same fields",
          "[saved_5d2cc0d]") {
  auto spec = service::decode_job_spec(saved_text("job/spec.json"));
  INFO((spec.has_value() ? std::string() : spec.error().message));
  REQUIRE(spec.has_value());
  CHECK(spec->store_prefix.rfind("job-", 0) == 0);
  CHECK(spec->run.evaluation.backend == "eager");
  CHECK(spec->run.evaluation.nan_check);
  CHECK(spec->run.shrink_inputs);
  CHECK_FALSE(spec->run.bisect_prefix);
  CHECK(spec->run.evaluation.timeout == std::chrono::milliseconds(60000));

  nlohmann::json written = service::encode(*spec);
  CHECK(written["format"] == "minifyd.job_spec");
  CHECK(written["version"] == 1);
  auto again = service::decode_job_spec(written.dump());
  REQUIRE(again.has_value());
  CHECK(service::encode(*again) == written);
  CHECK(again->run.evaluation.timeout == spec->run.evaluation.timeout);
  CHECK(again->store_prefix == spec->store_prefix);
}

TEST_CASE("5d2cc0d's job result reads as version 0: its summary and report", "[saved_5d2cc0d]") {
  auto result = service::decode_job_result(saved_text("job/result.json"));
  INFO((result.has_value() ? std::string() : result.error().message));
  REQUIRE(result.has_value());
  CHECK(result->summary.status == "minimized");
  CHECK(result->summary.stop == "finished");
  CHECK(result->summary.start_nodes == 124);
  CHECK(result->summary.shape.nodes == 3);
  CHECK(result->summary.totals.queries == 22);
  CHECK(result->summary.failure == std::optional<std::string>("nan"));
  CHECK(result->report.rfind("# minify run", 0) == 0);

  nlohmann::json written = service::encode(*result);
  CHECK(written["format"] == "minifyd.job_result");
  auto again = service::decode_job_result(written.dump());
  REQUIRE(again.has_value());
  CHECK(service::encode(*again) == written);

  // A result that says another format, or a newer version, is refused, naming both.
  written["version"] = 2;
  auto newer = service::decode_job_result(written.dump());
  REQUIRE_FALSE(newer.has_value());
  CHECK(newer.error().message ==
        "job result: format: 'minifyd.job_result' version 2 is not minifyd.job_result version 0 to 1");
}

TEST_CASE("5d2cc0d's checkpoints read: a done job's and a killed run's", "[saved_5d2cc0d]") {
  run::Checkpoint done = saved_checkpoint("job/checkpoint.json");
  CHECK(done.finished);
  CHECK(done.stop == "finished");
  CHECK(done.state.document.graph.size() == 3);
  CHECK(done.original.nodes == 124);
  CHECK(done.input_shrink.has_value());

  run::Checkpoint killed = saved_checkpoint("killed_run/checkpoint.json");
  CHECK_FALSE(killed.finished);
  CHECK(killed.steps.size() == 2);
  CHECK(killed.state.document.graph.size() == 30);
  CHECK(killed.state.eager != nullptr);
  CHECK(killed.totals.queries == 7);
  REQUIRE(killed.signature.has_value());
  CHECK(killed.signature->kind == protocol::FailureKind::nan);
}
