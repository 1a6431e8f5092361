// Worker protocol messages: every message round-trips, bad ones are refused naming the field.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "protocol/worker_messages.h"

using namespace minifyd::protocol;
using nlohmann::json;
using minifyd::DType;
using minifyd::FileIdentity;
using minifyd::GraphDocument;
using minifyd::TensorMeta;

namespace {

std::string refusal_of_request(const json& message) {
  auto decoded = decode_request(message);
  REQUIRE_FALSE(decoded.has_value());
  return decoded.error().message;
}

}  // namespace

TEST_CASE("requests round-trip", "[worker_messages]") {
  EvaluateRequest evaluate;
  evaluate.id = 7;
  evaluate.graph = json{{"format", "minifyd.graph"}};
  evaluate.store = "/tmp/store";
  evaluate.backend = "plugin:/x/libfaulty.so";
  evaluate.backend_options = {{"op", "aten::relu"}, {"fault", "segfault"}};
  evaluate.accuracy = AccuracyMode::strict_accuracy;
  evaluate.nan_check = true;
  auto decoded = decode_request(encode(WorkerRequest(evaluate)));
  REQUIRE(decoded.has_value());
  const auto& back = std::get<EvaluateRequest>(*decoded);
  CHECK(back.id == 7);
  CHECK(back.graph == evaluate.graph);
  CHECK(back.backend_options == evaluate.backend_options);
  CHECK(back.accuracy == AccuracyMode::strict_accuracy);
  CHECK(back.nan_check);

  // nan_check is optional: a request without it (an older coordinator's) does not check.
  json without_nan_check = encode(WorkerRequest(evaluate));
  without_nan_check.erase("nan_check");
  auto older = decode_request(without_nan_check);
  REQUIRE(older.has_value());
  CHECK_FALSE(std::get<EvaluateRequest>(*older).nan_check);

  auto shutdown = decode_request(encode(WorkerRequest(ShutdownRequest{9})));
  REQUIRE(shutdown.has_value());
  CHECK(id_of(*shutdown) == 9);

  json cancel = encode(WorkerRequest(CancelRequest{11}));
  CHECK(cancel == json{{"type", "cancel"}, {"id", 11}});
  auto cancelled = decode_request(cancel);
  REQUIRE(cancelled.has_value());
  REQUIRE(std::holds_alternative<CancelRequest>(*cancelled));
  CHECK(id_of(*cancelled) == 11);
}

TEST_CASE("replies round-trip, non-finite accuracy figures included", "[worker_messages]") {
  Verdict verdict;
  verdict.pass = false;
  verdict.kind = FailureKind::accuracy;
  verdict.accuracy = AccuracyReport{INFINITY, NAN, 0.5, 0.25};
  verdict.stderr_tail = "warning\n";
  EvaluateReply evaluated{3, verdict, 1.5, 2.5};
  evaluated.device_wait_ms = 0.75;
  evaluated.start_wait_ms = 412.5;
  auto decoded = decode_reply(encode(WorkerReply(evaluated)));
  REQUIRE(decoded.has_value());
  const auto& reply = std::get<EvaluateReply>(*decoded);
  CHECK(reply.run_ms == 2.5);
  CHECK(reply.device_wait_ms == 0.75);
  CHECK(reply.start_wait_ms == 412.5);
  CHECK_FALSE(reply.verdict.pass);
  CHECK(reply.verdict.kind == FailureKind::accuracy);
  CHECK(std::isinf(reply.verdict.accuracy->max_abs_error));
  CHECK(std::isnan(reply.verdict.accuracy->max_rel_error));
  CHECK(reply.verdict.stderr_tail == "warning\n");

  PropagateReply propagated{4, {{"relu", {std::string(64, 'a'), 16, "cpu", std::nullopt},
                                 {0, minifyd::DType::float32, {2, 2}, {2, 1}, 0, false}}},
                              "intermediates-1234", std::nullopt};
  auto back = decode_reply(encode(WorkerReply(propagated)));
  REQUIRE(back.has_value());
  CHECK(std::get<PropagateReply>(*back).values[0].tensor.shape == std::vector<std::int64_t>{2, 2});
  CHECK(std::get<PropagateReply>(*back).root == "intermediates-1234");

  auto error = decode_reply(encode(WorkerReply(ErrorReply{5, "blob missing"})));
  REQUIRE(error.has_value());
  CHECK(std::get<ErrorReply>(*error).message == "blob missing");
}

TEST_CASE("a nan verdict round-trips and describes the output holding NaN", "[worker_messages]") {
  Verdict verdict;
  verdict.pass = false;
  verdict.kind = FailureKind::nan;
  verdict.message = "output[0] holds NaN (3 of 3 elements) while no input does";
  CHECK(encode(verdict) == json{{"status", "fail"}, {"kind", "nan"}, {"message", verdict.message}});
  auto decoded = decode_verdict(encode(verdict));
  REQUIRE(decoded.has_value());
  CHECK(decoded->kind == FailureKind::nan);
  CHECK(decoded->message == verdict.message);
  CHECK(describe(*decoded) == "fail: nan (output[0] holds NaN (3 of 3 elements) while no input does)");
  CHECK(parse_failure_kind("nan") == FailureKind::nan);
}

TEST_CASE("an exception verdict round-trips with the frame that raised it", "[worker_messages]") {
  Verdict verdict;
  verdict.pass = false;
  verdict.kind = FailureKind::exception;
  verdict.exception_type = "KeyError";
  verdict.raised_at = "torch/_inductor/loop_body.py:get_read_expr";
  verdict.message = "'buf10'";
  CHECK(encode(verdict) == json{{"status", "fail"}, {"kind", "exception"}, {"exception_type", "KeyError"},
                                {"raised_at", verdict.raised_at}, {"message", "'buf10'"}});
  auto decoded = decode_verdict(encode(verdict));
  REQUIRE(decoded.has_value());
  CHECK(decoded->raised_at == verdict.raised_at);
  CHECK(describe(*decoded) == "fail: exception KeyError raised at torch/_inductor/loop_body.py:get_read_expr: 'buf10'");
  verdict.raised_at.clear();
  CHECK(describe(verdict) == "fail: exception KeyError: 'buf10'");
}

TEST_CASE("a hello of another protocol version is refused before any work", "[worker_messages]") {
  WorkerHello hello;
  hello.pid = 42;
  hello.torch_version = "1.13.0";
  hello.devices = {{0, "NVIDIA H100", "GPU-1234"}};
  json encoded = encode(hello);
  auto decoded = decode_hello(encoded);
  REQUIRE(decoded.has_value());
  CHECK(decoded->devices[0].uuid == "GPU-1234");
  CHECK(decoded->concurrency == 1);

  encoded["version"] = 2;
  auto refused = decode_hello(encoded);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().message == "worker speaks minifyd.worker version 2, this coordinator speaks minifyd.worker version 1");
  CHECK_FALSE(decode_hello(json{{"type", "verdict"}}).has_value());
}

TEST_CASE("a hello says how many requests the worker serves at once, 1 when it does not say", "[worker_messages]") {
  WorkerHello hello;
  hello.concurrency = 8;
  json encoded = encode(hello);
  auto decoded = decode_hello(encoded);
  REQUIRE(decoded.has_value());
  CHECK(decoded->concurrency == 8);

  encoded.erase("concurrency");  // an older worker's hello
  auto older = decode_hello(encoded);
  REQUIRE(older.has_value());
  CHECK(older->concurrency == 1);

  encoded["concurrency"] = 0u;  // as parsed from JSON text: unsigned
  auto zero = decode_hello(encoded);
  REQUIRE_FALSE(zero.has_value());
  CHECK(zero.error().message == "concurrency: must be at least 1");
  encoded["concurrency"] = -2;
  CHECK_FALSE(decode_hello(encoded).has_value());
}

TEST_CASE("a hello says whether its requests are served in children whose end never ends it, no when it does not say",
          "[worker_messages]") {
  WorkerHello hello;
  CHECK_FALSE(encode(hello).contains("serves_in_children"));
  hello.serves_in_children = true;
  json encoded = encode(hello);
  auto decoded = decode_hello(encoded);
  REQUIRE(decoded.has_value());
  CHECK(decoded->serves_in_children);
  encoded.erase("serves_in_children");
  CHECK_FALSE(decode_hello(encoded)->serves_in_children);
  encoded["serves_in_children"] = "yes";
  CHECK_FALSE(decode_hello(encoded).has_value());
}

TEST_CASE("a readiness line says whether a request would start at once, and is no reply", "[worker_messages]") {
  for (bool ready : {false, true}) {
    json encoded = encode(Readiness{ready});
    CHECK(is_readiness(encoded));
    auto decoded = decode_readiness(encoded);
    REQUIRE(decoded.has_value());
    CHECK(decoded->ready == ready);
    CHECK_FALSE(decode_reply(encoded).has_value());
  }
  auto documented = decode_readiness(json::parse(R"({"type":"readiness","ready":false})"));  // docs/protocol.md
  REQUIRE(documented.has_value());
  CHECK_FALSE(documented->ready);
  CHECK_FALSE(is_readiness(json{{"type", "verdict"}, {"id", 1}}));
  CHECK_FALSE(is_readiness(json::array()));
  CHECK_FALSE(decode_readiness(json{{"type", "readiness"}}).has_value());
  CHECK_FALSE(decode_readiness(json{{"type", "readiness"}, {"ready", "yes"}}).has_value());
}

TEST_CASE("a hello names the backends it serves, and one without them serves whatever it is sent", "[worker_messages]") {
  WorkerHello hello;
  hello.backends = {"eager", "torchscript", "plugin"};
  auto decoded = decode_hello(encode(hello));
  REQUIRE(decoded.has_value());
  CHECK(decoded->backends == hello.backends);
  CHECK(serves(decoded->backends, "torchscript"));
  CHECK(serves(decoded->backends, "plugin:/opt/libmine.so"));
  CHECK_FALSE(serves(decoded->backends, "inductor"));
  CHECK(serves({}, "inductor"));  // an older worker's hello

  json encoded = encode(hello);
  encoded["backends"] = json::array({"inductor", 3});
  auto bad = decode_hello(encoded);
  REQUIRE_FALSE(bad.has_value());
  CHECK(bad.error().message.find("backends[1]") != std::string::npos);
}

TEST_CASE("a verdict announcing the worker's retirement round-trips, and others do not say so", "[worker_messages]") {
  EvaluateReply reply;
  reply.id = 4;
  reply.verdict.pass = false;
  reply.verdict.kind = FailureKind::exception;
  reply.retiring = true;
  json encoded = encode(WorkerReply(reply));
  CHECK(encoded["retiring"] == true);
  auto decoded = decode_reply(encoded);
  REQUIRE(decoded.has_value());
  CHECK(std::get<EvaluateReply>(*decoded).retiring);

  reply.retiring = false;
  encoded = encode(WorkerReply(reply));
  CHECK_FALSE(encoded.contains("retiring"));
  CHECK_FALSE(std::get<EvaluateReply>(*decode_reply(encoded)).retiring);
}

TEST_CASE("malformed requests are refused naming the field", "[worker_messages]") {
  CHECK(refusal_of_request(json::array()) == "a message is a JSON object, got an array");
  CHECK(refusal_of_request(json{{"id", 1}}) == "missing field 'type'");
  CHECK(refusal_of_request(json{{"type", "explode"}, {"id", 1}}) ==
        "type: unknown request type 'explode' (evaluate, propagate, analyze, shutdown, cancel)");
  CHECK(refusal_of_request(json{{"type", "cancel"}}) == "missing field 'id'");
  json evaluate = encode(WorkerRequest(EvaluateRequest{1, json::object(), "/s", "eager", {}, AccuracyMode::off}));
  json bad = evaluate;
  bad["id"] = "one";
  CHECK(refusal_of_request(bad) == "id: expected an int, got a string");
  bad = evaluate;
  bad["graph"] = 3;
  CHECK(refusal_of_request(bad) == "graph: expected an object, got an int");
  bad = evaluate;
  bad["backend_options"] = json{{"op", 5}};
  CHECK(refusal_of_request(bad) == "backend_options.op: expected a string, got an int");
  bad = evaluate;
  bad["accuracy"] = "loose";
  CHECK(refusal_of_request(bad) == "accuracy: unknown mode 'loose' (off, accuracy, strict-accuracy)");
  bad = evaluate;
  bad["nan_check"] = "yes";
  CHECK(refusal_of_request(bad) == "nan_check: expected a bool, got a string");
}

TEST_CASE("malformed replies are refused naming the field", "[worker_messages]") {
  auto refused = decode_reply(json{{"type", "verdict"}, {"id", 1}, {"verdict", {{"status", "fail"}, {"kind", "meltdown"}}}});
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().message == "verdict: kind: unknown failure kind 'meltdown' (crash, exception, accuracy, timeout, nan, cuda_error)");
  refused = decode_reply(json{{"type", "propagated"}, {"id", 1}, {"root", "r"}, {"values", {{{"node", "x"}}}}});
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().message == "values[0]: missing field 'storage'");
}

TEST_CASE("analyze requests and replies round-trip, non-finite figures and failures included", "[worker_messages]") {
  AnalyzeRequest analyze;
  analyze.id = 4;
  analyze.graph = json{{"format", "minifyd.graph"}};
  analyze.store = "/tmp/store";
  analyze.backend = "torchscript";
  analyze.backend_options = {{"cpu_fusion", "1"}};
  analyze.nodes = {"relu", "mul"};
  auto request = decode_request(encode(WorkerRequest(analyze)));
  REQUIRE(request.has_value());
  const auto& back = std::get<AnalyzeRequest>(*request);
  CHECK(back.nodes == analyze.nodes);
  CHECK(back.backend_options == analyze.backend_options);
  json no_nodes = encode(WorkerRequest(analyze));
  no_nodes["nodes"] = json{{"relu", 1}};
  CHECK(refusal_of_request(no_nodes) == "nodes: expected an array, got an object");

  AnalyzeReply reply;
  reply.id = 4;
  ValueMeasurement relu;
  relu.node = "relu";
  relu.dtype = "float32";
  relu.shape = {2, 3};
  relu.measured = true;
  relu.diverges = true;
  relu.max_abs_error = 1;
  relu.compiled = ErrorFigures{std::numeric_limits<double>::infinity(), std::nan("")};
  relu.eager = ErrorFigures{1e-7, 2e-8};
  relu.compiled_deterministic = false;
  reply.values = {relu};
  auto decoded = decode_reply(encode(WorkerReply(reply)));
  REQUIRE(decoded.has_value());
  const auto& analyzed = std::get<AnalyzeReply>(*decoded);
  REQUIRE(analyzed.values.size() == 1);
  const ValueMeasurement& value = analyzed.values[0];
  CHECK(value.shape == std::vector<std::int64_t>{2, 3});
  CHECK(std::isinf(value.compiled->max_abs_error));
  CHECK(std::isnan(value.compiled->rmse));
  CHECK(value.eager->rmse == 2e-8);
  CHECK_FALSE(value.compiled_deterministic);
  CHECK(value.fp64_deterministic);
  CHECK(analyzed.exposure == exposure_outputs);

  AnalyzeReply failed;
  failed.id = 5;
  failed.compiled_failure = crash_verdict(minifyd::ExitStatus{true, 0, 11}, "tail");
  auto failure = decode_reply(encode(WorkerReply(failed)));
  REQUIRE(failure.has_value());
  REQUIRE(compiled_failure_of(*failure) != nullptr);
  CHECK(compiled_failure_of(*failure)->signal == "SIGSEGV");

  json bad = encode(WorkerReply(reply));
  bad["values"][0]["compiled"]["rmse"] = "small";
  auto refused = decode_reply(bad);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().message == "values[0].compiled.rmse: expected a float, got a string");
  bad = encode(WorkerReply(failed));
  bad["compiled_failure"]["kind"] = "meltdown";
  refused = decode_reply(bad);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().message == "compiled_failure.kind: unknown failure kind 'meltdown' (crash, exception, accuracy, timeout, nan, cuda_error)");
}

TEST_CASE("a for_analysis propagate says so, and its reply carries the eager failure", "[worker_messages]") {
  PropagateRequest propagate{3, json{{"format", "minifyd.graph"}}, "/tmp/store", true};
  auto request = decode_request(encode(WorkerRequest(propagate)));
  REQUIRE(request.has_value());
  CHECK(std::get<PropagateRequest>(*request).for_analysis);
  PropagateReply reply;
  reply.id = 3;
  reply.root = "r";
  Verdict failure;
  failure.pass = false;
  failure.kind = FailureKind::exception;
  failure.node = "mm";
  reply.eager_failure = failure;
  auto decoded = decode_reply(encode(WorkerReply(reply)));
  REQUIRE(decoded.has_value());
  REQUIRE(std::get<PropagateReply>(*decoded).eager_failure);
  CHECK(std::get<PropagateReply>(*decoded).eager_failure->node == "mm");
}

TEST_CASE("a request line nested deeper than the limit is refused before it is parsed", "[worker_messages]") {
  auto deep = parse_worker_request_line(std::string(100000, '[') + std::string(100000, ']'));
  REQUIRE_FALSE(deep.has_value());
  CHECK(deep.error().message == "the line nests more than the 64 levels allowed");
  std::string at_limit = "{\"graph\": " + std::string(63, '[') + std::string(63, ']') + "}";
  CHECK(parse_worker_request_line(at_limit).has_value());
  auto not_json = parse_worker_request_line("{\"type\": ");
  REQUIRE_FALSE(not_json.has_value());
  CHECK(not_json.error().message.find("invalid JSON") != std::string::npos);
}

TEST_CASE("a bisect probe and what it observed round-trip; a bad one is refused naming the field", "[worker_messages]") {
  EvaluateRequest evaluate;
  evaluate.id = 5;
  evaluate.graph = json::object();
  evaluate.store = "/tmp/store";
  evaluate.backend = "inductor";
  evaluate.bisect = BisectProbe{"lowerings", 3};
  auto decoded = decode_request(encode(WorkerRequest(evaluate)));
  REQUIRE(decoded.has_value());
  const auto& probe = std::get<EvaluateRequest>(*decoded).bisect;
  REQUIRE(probe.has_value());
  CHECK(probe->subsystem == "lowerings");
  CHECK(probe->enabled == 3u);

  json counting = encode(WorkerRequest(evaluate));
  counting["bisect"] = json::object();
  auto counted = decode_request(counting);
  REQUIRE(counted.has_value());
  CHECK_FALSE(std::get<EvaluateRequest>(*counted).bisect->subsystem.has_value());

  json bad = encode(WorkerRequest(evaluate));
  bad["bisect"] = json{{"enabled", 2u}};
  CHECK(refusal_of_request(bad) == "bisect: enabled: only with a subsystem");
  bad["bisect"] = json{{"subsystem", "lowerings"}, {"enabled", -1}};
  CHECK(refusal_of_request(bad).rfind("bisect.enabled", 0) == 0);

  EvaluateReply reply{6, Verdict{}, 1, 2};
  BisectObservation observation;
  observation.plan.emplace();
  observation.plan->stages = {"aot_eager", "inductor"};
  observation.plan->subsystems["inductor"] = {BisectSubsystem{"lowerings", bisect_kind_applications, {}, "CompilerBisector"},
                                             BisectSubsystem{"inductor_fallback_random", bisect_kind_config,
                                                             {{"fallback_random", "true"}}, "CompilerBisector"}};
  observation.applications = {{"lowerings", 4}, {"post_grad_passes", 11}};
  observation.debug_info = {"sin", "relu"};
  reply.bisect = observation;
  auto back = decode_reply(encode(WorkerReply(reply)));
  REQUIRE(back.has_value());
  const auto& seen = std::get<EvaluateReply>(*back).bisect;
  REQUIRE(seen.has_value());
  CHECK(seen->plan->subsystems.at("inductor") == observation.plan->subsystems.at("inductor"));
  CHECK(seen->applications.at("post_grad_passes") == 11u);
  CHECK(seen->debug_info == observation.debug_info);

  json unknown_kind = encode(WorkerReply(reply));
  unknown_kind["bisect"]["plan"]["subsystems"]["inductor"][0]["kind"] = "sometimes";
  auto refused = decode_reply(unknown_kind);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().message.find("unknown kind 'sometimes'") != std::string::npos);
}

TEST_CASE("docs/protocol.md's bisect replies decode", "[worker_messages]") {
  auto stage = decode_reply(json::parse(
      R"({"type":"verdict","id":3,"verdict":{"status":"fail","kind":"exception","exception_type":"torch._inductor.exc.CppCompileError","message":"C++ compile error"},"compile_ms":1310.2,"run_ms":0,"bisect":{"plan":{"stages":["aot_eager","aot_eager_decomp_partition","inductor"],"skipped":["eager","aot_eager_decomp_partition_crossref"],"subsystems":{"inductor":[{"name":"lowerings","kind":"applications","source":"CompilerBisector"}]}},"applications":{"lowerings":2,"post_grad_passes":11}}})"));
  REQUIRE(stage.has_value());
  const auto& planned = std::get<EvaluateReply>(*stage).bisect;
  REQUIRE(planned.has_value());
  CHECK(planned->plan->subsystems.at("inductor").at(0).name == "lowerings");
  auto subsystem = decode_reply(json::parse(
      R"({"type":"verdict","id":4,"verdict":{"status":"pass"},"compile_ms":310.2,"run_ms":0.4,"bisect":{"applications":{"lowerings":2,"post_grad_passes":11},"debug_info":["sin","relu"]}})"));
  REQUIRE(subsystem.has_value());
  const auto& probed = std::get<EvaluateReply>(*subsystem).bisect;
  REQUIRE(probed.has_value());
  CHECK_FALSE(probed->plan.has_value());
  CHECK(probed->debug_info == std::vector<std::string>{"sin", "relu"});
}

TEST_CASE("a compile pool is asked for only beyond one process, and never for none", "[worker_messages]") {
  EvaluateRequest evaluate;
  evaluate.graph = json::object();
  evaluate.backend = "inductor";
  CHECK_FALSE(encode(WorkerRequest(evaluate)).contains("compile_threads"));
  evaluate.compile_threads = 8;
  json encoded = encode(WorkerRequest(evaluate));
  CHECK(encoded.at("compile_threads") == 8);
  auto decoded = decode_request(encoded);
  REQUIRE(decoded.has_value());
  CHECK(std::get<EvaluateRequest>(*decoded).compile_threads == 8);
  encoded["compile_threads"] = 0u;
  CHECK(refusal_of_request(encoded) == "compile_threads: expected 1 or more processes");
  encoded["compile_threads"] = -2;
  CHECK_FALSE(refusal_of_request(encoded).empty());
}

// The blobs a coordinator vouches for ride on every graph request, as [device, inode, size, ctime_ns].
TEST_CASE("vouched blobs ride on evaluate, propagate and analyze requests; a malformed one is refused", "[worker_messages]") {
  const std::string hash(64, 'a');
  VouchedBlobs vouched{{hash, FileIdentity{2049, 1234567, 1 << 20, -5}}};
  EvaluateRequest evaluate;
  evaluate.graph = json::object();
  evaluate.backend = "eager";
  CHECK_FALSE(encode(WorkerRequest(evaluate)).contains("vouched"));
  evaluate.vouched = vouched;
  PropagateRequest propagate;
  propagate.graph = json::object();
  propagate.vouched = vouched;
  AnalyzeRequest analyze;
  analyze.graph = json::object();
  analyze.backend = "eager";
  analyze.vouched = vouched;
  auto round_trip = [&](const WorkerRequest& request) {
    json encoded = encode(request);
    CHECK(encoded.at("vouched").at(hash) == json::array({2049, 1234567, 1 << 20, -5}));
    auto decoded = decode_request(encoded);
    REQUIRE(decoded.has_value());
    return *decoded;
  };
  CHECK(std::get<EvaluateRequest>(round_trip(evaluate)).vouched == vouched);
  CHECK(std::get<PropagateRequest>(round_trip(propagate)).vouched == vouched);
  CHECK(std::get<AnalyzeRequest>(round_trip(analyze)).vouched == vouched);
  json encoded = encode(WorkerRequest(evaluate));
  encoded["vouched"][hash] = json::array({1, 2, 3});
  CHECK(refusal_of_request(encoded).find("vouched." + hash + ": expected [device, inode, size, ctime_ns]") !=
        std::string::npos);
  encoded["vouched"] = "all of them";
  CHECK_FALSE(refusal_of_request(encoded).empty());

  // docs/protocol.md's example, its graph (elided there) empty.
  auto documented = decode_request(json::parse(
      R"({"type":"evaluate","id":3,"graph":{},"store":"/tmp/small/store","backend":"eager","vouched":{"307c00da40197e000c1ff6efc1715503ee86860b0c5b47dd2c7b2c87f62ca2ec":[2049,1835017,8,1764345600123456789]}})"));
  REQUIRE(documented.has_value());
  CHECK(std::get<EvaluateRequest>(*documented).vouched.begin()->second ==
        FileIdentity{2049, 1835017, 8, 1764345600123456789});

  GraphDocument document;
  document.storages = {{hash, 4, "cpu", std::nullopt}, {std::string(64, 'b'), 4, "cpu", std::nullopt}};
  document.inputs = {TensorMeta{0, DType::float32, {1}, {1}, 0, false}, TensorMeta{1, DType::float32, {1}, {1}, 0, false}};
  VouchedBlobs more = vouched;
  more[std::string(64, 'c')] = FileIdentity{1, 2, 3, 4};
  CHECK(vouched_for(more, document) == vouched);
}

TEST_CASE("output code is asked for, reported, and a crash's last marked kernel read from stderr", "[worker_messages]") {
  EvaluateRequest evaluate;
  evaluate.graph = json::object();
  evaluate.backend = "inductor";
  evaluate.output_code = output_code_compile;
  auto decoded = decode_request(encode(WorkerRequest(evaluate)));
  REQUIRE(decoded.has_value());
  CHECK(std::get<EvaluateRequest>(*decoded).output_code == std::optional<std::string>(output_code_compile));
  json bad = encode(WorkerRequest(evaluate));
  bad["output_code"] = "everything";
  CHECK(refusal_of_request(bad) == "output_code: unknown mode 'everything' (run, compile)");

  EvaluateReply reply{2, Verdict{}, 0, 0};
  reply.output_code = OutputCode{{"def call(args):\n    cpp_fused_0(buf0)\n"}, "cpp_fused_0", {"relu", "sin_2"}};
  auto back = decode_reply(encode(WorkerReply(reply)));
  REQUIRE(back.has_value());
  const auto& code = std::get<EvaluateReply>(*back).output_code;
  REQUIRE(code.has_value());
  CHECK(code->modules == reply.output_code->modules);
  CHECK(code->failing_kernel == "cpp_fused_0");
  CHECK(code->failing_nodes == std::vector<std::string>{"relu", "sin_2"});

  MarkedKernel last = last_marked_kernel("minifyd-kernel: cpp_fused_0 mul\nminifyd-kernel: cpp_fused_relu_1 add_3 relu_2\n"
                                         "terminate called\n");
  CHECK(last.name == "cpp_fused_relu_1");
  CHECK(last.nodes == std::vector<std::string>{"add_3", "relu_2"});
  last = last_marked_kernel("minifyd-kernel: triton_poi_fused_0");
  CHECK(last.name == "triton_poi_fused_0");
  CHECK(last.nodes.empty());
  CHECK(last_marked_kernel("Segmentation fault\n").name.empty());
}
