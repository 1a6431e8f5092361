// Run specs and checkpoints survive a round trip through their files; bad files are errors that
// name the file and the field.
#include <catch2/catch.hpp>

#include "common/file_util.h"
#include "common/graph_codec.h"
#include "daemon/analysis/analysis_files.h"
#include "daemon/run/checkpoint.h"
#include "daemon/search/strategies/truncate_suffix.h"
#include "protocol/json_fields.h"
#include "tests/support/sample_documents.h"
#include "tests/support/temp_dir.h"

using namespace minifyd;
using namespace minifyd::run;

namespace {

RunSpec sample_spec() {
  RunSpec spec;
  spec.graph_dir = "/graphs/resnet \"18\"";
  spec.evaluation.backend = "plugin:/opt/faulty.so";
  spec.evaluation.backend_options = {{"op", "aten::relu"}, {"fault", "segfault"}};
  spec.evaluation.accuracy = protocol::AccuracyMode::strict_accuracy;
  spec.evaluation.nan_check = true;
  spec.evaluation.check_str = "SIG.*";
  spec.evaluation.timeout = std::chrono::milliseconds(2500);
  spec.match = verdict::MatchMode::any;
  spec.strategies = {"truncate-suffix", "delta-debugging"};
  spec.max_granularity = 8;
  spec.max_queries = 100;
  spec.max_time_seconds = 30.5;
  spec.analyze_first = true;
  return spec;
}

Checkpoint sample_checkpoint() {
  Checkpoint checkpoint;
  checkpoint.spec = sample_spec();
  checkpoint.signature = verdict::FailureSignature{protocol::FailureKind::crash, "SIGSEGV", "", "", ""};
  checkpoint.original_hash = std::string(64, 'c');
  checkpoint.original = GraphShape{273, 1, 1};
  auto document = decode_graph_document(test::sample_document());
  REQUIRE(document.has_value());
  checkpoint.state.document = std::move(*document);
  checkpoint.state.loads = {"arg1_1"};
  protocol::PropagatedValue value;
  value.node = "mm";
  value.storage = StorageRef{std::string(64, 'd'), 16, "cpu", std::nullopt};
  value.tensor.shape = {2, 2};
  value.tensor.stride = {2, 1};
  checkpoint.state.eager = std::make_shared<const search::EagerValues>(search::eager_values_from({value}));
  checkpoint.verdicts_key = "key";
  checkpoint.verdicts = {{std::string(64, 'e'), true}, {std::string(64, 'f'), false}};
  checkpoint.steps = {AcceptedStep{"truncate-suffix", 128, GraphShape{140, 1, 1}, 9}};
  checkpoint.totals = RunTotals{42, 7, 3, 1, 12.5, 2};
  checkpoint.analysis = OriginalAnalysis{std::string("relu"), 2, 1.25};
  checkpoint.plain_check = protocol::PlainCheck{protocol::plain_check_fails, "killed by SIGSEGV", 4.5};
  checkpoint.stop = "";
  return checkpoint;
}

}  // namespace

TEST_CASE("a run spec round-trips through JSON", "[checkpoint]") {
  RunSpec spec = sample_spec();
  auto decoded = protocol::decode_message<RunSpec>(JsonView(encode(spec)));
  REQUIRE(decoded.has_value());
  CHECK(encode(*decoded) == encode(spec));
  CHECK(evaluation_key(*decoded) == evaluation_key(spec));

  RunSpec other = spec;
  other.evaluation.backend_options["op"] = "aten::sigmoid";
  CHECK(evaluation_key(other) != evaluation_key(spec));
  RunSpec elsewhere = spec;
  elsewhere.graph_dir = "/somewhere/else";
  elsewhere.max_queries = 5;
  CHECK(evaluation_key(elsewhere) == evaluation_key(spec));
}

TEST_CASE("a checkpoint round-trips through its file", "[checkpoint]") {
  test::TempDir dir;
  Checkpoint checkpoint = sample_checkpoint();
  REQUIRE(write_checkpoint(checkpoint, dir.path()).has_value());
  auto read = read_checkpoint(dir.path());
  if (!read) FAIL(read.error().message);
  CHECK(encode(read->spec) == encode(checkpoint.spec));
  CHECK(read->signature == checkpoint.signature);
  CHECK(read->original_hash == checkpoint.original_hash);
  CHECK(read->original.nodes == 273);
  CHECK(encode_graph_document(read->state.document) == encode_graph_document(checkpoint.state.document));
  CHECK(read->state.loads == checkpoint.state.loads);
  REQUIRE(read->state.eager->find("mm") != nullptr);
  CHECK(read->state.eager->find("mm")->storage.hash == std::string(64, 'd'));
  CHECK(read->verdicts == checkpoint.verdicts);
  CHECK(read->verdicts_key == "key");
  REQUIRE(read->steps.size() == 1);
  CHECK(read->steps[0].strategy == "truncate-suffix");
  CHECK(read->steps[0].shape.nodes == 140);
  CHECK(read->totals.queries == 42);
  CHECK(read->totals.wall_seconds == 12.5);
  CHECK(read->totals.sessions == 2);
  REQUIRE(read->analysis.has_value());
  CHECK(read->analysis->first_divergence == std::optional<std::string>("relu"));
  CHECK(read->analysis->requests == 2);
  REQUIRE(read->plain_check.has_value());
  CHECK(protocol::encode(*read->plain_check) == protocol::encode(*checkpoint.plain_check));
  CHECK_FALSE(read->finished);
}

TEST_CASE("checkpoints and specs from before analyses and plain checks read as without one", "[checkpoint]") {
  nlohmann::json json = encode(sample_checkpoint());
  json.erase("analysis");
  json.erase("plain_check");
  json["spec"].erase("analyze");
  json["spec"].erase("analyze_first");
  auto read = decode_checkpoint(json);
  if (!read) FAIL(read.error().message);
  CHECK_FALSE(read->analysis.has_value());
  CHECK_FALSE(read->plain_check.has_value());
  CHECK_FALSE(read->spec.analyze);
  CHECK_FALSE(read->spec.analyze_first);
}

TEST_CASE("a checkpoint saved before its state's eager values came has none, and is read back without them",
          "[checkpoint]") {
  Checkpoint sample = sample_checkpoint();
  auto asked = search::EagerValues::asked_through([](std::size_t, GraphDocument) {});
  asked->ask(sample.state.document);
  for (auto values : {std::shared_ptr<const search::EagerValues>(asked), std::shared_ptr<const search::EagerValues>()}) {
    Checkpoint checkpoint = sample_checkpoint();
    checkpoint.state.eager = values;
    nlohmann::json json = encode(checkpoint);
    CHECK(json["eager"].is_null());
    auto read = decode_checkpoint(json);
    if (!read) FAIL(read.error().message);
    CHECK(read->state.eager == nullptr);
  }

  // Those of a prefix of the state (the bisection's) do not cover it: a resume propagates the state.
  std::size_t asks = 0;
  auto prefix_only = search::EagerValues::asked_through([&](std::size_t, GraphDocument) { ++asks; });
  search::SearchState prefix = search::truncated_at(sample.state, 3);  // through mm
  REQUIRE(prefix.document.graph.size() < sample.state.document.graph.size());
  prefix_only->ask(prefix.document);
  prefix_only->arrive(0, sample.state.eager->all());
  Checkpoint checkpoint = sample_checkpoint();
  checkpoint.state.eager = prefix_only;
  CHECK(encode(checkpoint)["eager"].is_null());
  // Asked for the whole state too, and arrived: saved.
  prefix_only->ask(sample.state.document);
  CHECK(asks == 2);
  prefix_only->arrive(1, {});
  CHECK(encode(checkpoint)["eager"].size() == 1);

  auto failed = search::EagerValues::asked_through([](std::size_t, GraphDocument) {});
  failed->ask(sample.state.document);
  failed->fail();
  checkpoint.state.eager = failed;
  CHECK(encode(checkpoint)["eager"].is_null());
}

TEST_CASE("the analysis files a job keeps are only the analysis's own", "[checkpoint]") {
  analysis::AnalysisFiles files{{"analysis.md", "# Analysis"}, {"analysis.json", "{}"}};
  auto decoded = analysis::decode_analysis_files(analysis::encode_analysis_files(files));
  REQUIRE(decoded.has_value());
  CHECK(*decoded == files);
  for (const char* bad : {R"({"../../etc/passwd": "x"})", R"({"analysis.md": 3})", "[]", "not json"}) {
    auto refused = analysis::decode_analysis_files(bad);
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().kind == ErrorKind::corrupt);
  }
}

TEST_CASE("bad checkpoints are errors naming the file and the field", "[checkpoint]") {
  test::TempDir dir;
  std::string path = (dir.path() / checkpoint_file_name).string();

  auto missing = read_checkpoint(dir.path());
  REQUIRE_FALSE(missing.has_value());
  CHECK(missing.error().kind == ErrorKind::not_found);

  REQUIRE(write_file_atomic(dir.path() / checkpoint_file_name, "{\"format\": ").has_value());
  auto truncated = read_checkpoint(dir.path());
  REQUIRE_FALSE(truncated.has_value());
  CHECK(truncated.error().message.rfind(path + ": ", 0) == 0);

  Checkpoint checkpoint = sample_checkpoint();
  REQUIRE(write_checkpoint(checkpoint, dir.path()).has_value());
  auto text = read_file(dir.path() / checkpoint_file_name);
  REQUIRE(text.has_value());
  auto json = nlohmann::json::parse(*text);
  json["loads"] = {"no_such_node"};
  REQUIRE(write_file_atomic(dir.path() / checkpoint_file_name, json.dump()).has_value());
  auto bad_load = read_checkpoint(dir.path());
  REQUIRE_FALSE(bad_load.has_value());
  CHECK(bad_load.error().message == path + ": loads[0]: 'no_such_node' is not a node of the graph");

  json = nlohmann::json::parse(*text);
  json["version"] = 9;
  REQUIRE(write_file_atomic(dir.path() / checkpoint_file_name, json.dump()).has_value());
  auto future = read_checkpoint(dir.path());
  REQUIRE_FALSE(future.has_value());
  CHECK(future.error().message ==
        path + ": format: 'minifyd.checkpoint' version 9 is not minifyd.checkpoint version 1");
}
