// Every numeric option and spec field held to its kind's range (common/number_range.h), on the
// command line and in the daemon's requests alike: refused naming the option or field (issue 52).
#include <catch2/catch.hpp>

#include <algorithm>

#include <CLI/CLI.hpp>

#include "daemon/options/evaluation_options.h"
#include "daemon/options/pool_options.h"
#include "daemon/cli/search_spec_options.h"
#include "daemon/run/run_spec.h"
#include "protocol/json_fields.h"

using namespace minifyd;

namespace {

// What `minify run`'s options say of `arguments`: "" when they parse, else CLI11's error.
std::string parse_error(std::vector<std::string> arguments) {
  CLI::App app;
  cli::SearchSpecOptions search;
  options::PoolOptions pool;
  search.add_to(app, /*backend_required=*/false);
  pool.add_to(app);
  std::reverse(arguments.begin(), arguments.end());  // CLI11 takes them last first
  try {
    app.parse(arguments);
  } catch (const CLI::ParseError& error) {
    return error.what();
  }
  return "";
}

nlohmann::json run_spec_json() {
  run::RunSpec spec;
  spec.graph_dir = "/g";
  spec.evaluation.backend = "eager";
  return run::encode(spec);
}

}  // namespace

TEST_CASE("numeric options out of their range are refused naming the option", "[numbers]") {
  CHECK(parse_error({"--workers", "8", "--timeout", "2.5", "--max-time", "60", "--cpu-limit", "0"}).empty());
  CHECK_THAT(parse_error({"--workers", "100000"}),
             Catch::Contains("--workers") && Catch::Contains("must be an integer from 1 to 256"));
  CHECK_THAT(parse_error({"--workers", "18446744073709551617"}), Catch::Contains("--workers"));
  CHECK_THAT(parse_error({"--timeout", "nan"}), Catch::Contains("--timeout") && Catch::Contains("'nan'"));
  CHECK_THAT(parse_error({"--timeout", "inf"}), Catch::Contains("--timeout"));
  CHECK_THAT(parse_error({"--import-timeout", "1e308"}), Catch::Contains("--import-timeout"));
  CHECK_THAT(parse_error({"--max-time", "1e308"}), Catch::Contains("--max-time"));
  CHECK_THAT(parse_error({"--max-queries", "0"}), Catch::Contains("--max-queries"));
  CHECK_THAT(parse_error({"--max-granularity=-2"}), Catch::Contains("--max-granularity"));
  CHECK_THAT(parse_error({"--cpu-limit=-1"}), Catch::Contains("--cpu-limit"));
  CHECK_THAT(parse_error({"--memory-limit=-1"}), Catch::Contains("--memory-limit"));
  CHECK_THAT(parse_error({"--gpus", "0", "--workers-per-gpu", "1000"}), Catch::Contains("--workers-per-gpu"));
}

TEST_CASE("a pool of --gpus times --workers-per-gpu workers is bounded as --workers is", "[numbers]") {
  options::PoolOptions pool;
  pool.gpus = "0,1,2,3,4,5,6,7,8";
  pool.workers_per_gpu = 64;
  auto slots = pool.slots();
  REQUIRE_FALSE(slots.has_value());
  CHECK(slots.error().message == "--gpus and --workers-per-gpu: 576 workers in all, at most 256");
}

TEST_CASE("a spec's numbers out of their range are refused naming the field", "[numbers]") {
  nlohmann::json spec = run_spec_json();
  REQUIRE(protocol::decode_message<run::RunSpec>(JsonView(spec)).has_value());

  spec["evaluation"]["timeout_ms"] = 9'000'000'000'000'000'000LL;
  CHECK_THAT(protocol::decode_message<run::RunSpec>(JsonView(spec)).error().message,
             Catch::StartsWith("evaluation: timeout_ms: 9000000000000000000 ms is out of range"));
  spec = run_spec_json();
  spec["evaluation"]["timeout_ms"] = 0;
  CHECK_FALSE(protocol::decode_message<run::RunSpec>(JsonView(spec)).has_value());

  spec = run_spec_json();
  spec["max_time_seconds"] = 1e308;
  CHECK(protocol::decode_message<run::RunSpec>(JsonView(spec)).error().message ==
        "max_time_seconds: 1e+308 is out of range: must be a number of seconds from 0.001 to 31536000");
  spec["max_time_seconds"] = 0;
  CHECK_FALSE(protocol::decode_message<run::RunSpec>(JsonView(spec)).has_value());
  spec["max_time_seconds"] = 600;
  CHECK(protocol::decode_message<run::RunSpec>(JsonView(spec)).value().max_time_seconds == 600);

  spec = run_spec_json();
  spec["max_queries"] = 0u;  // as parsed from text: a count
  CHECK(protocol::decode_message<run::RunSpec>(JsonView(spec)).error().message ==
        "max_queries: 0 is out of range: must be an integer from 1 to 1000000000");
  spec["max_queries"] = 18446744073709551615ULL;
  CHECK_FALSE(protocol::decode_message<run::RunSpec>(JsonView(spec)).has_value());
  spec = run_spec_json();
  spec["max_granularity"] = 1ULL << 40;
  CHECK_FALSE(protocol::decode_message<run::RunSpec>(JsonView(spec)).has_value());
}
