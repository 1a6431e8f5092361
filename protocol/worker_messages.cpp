// Encoding and decoding of worker protocol messages.
#include "protocol/worker_messages.h"

#include <algorithm>

#include "common/graph_codec.h"
#include "common/json_view.h"
#include "common/tensor_codec.h"
#include "protocol/json_fields.h"
#include "protocol/json_nesting.h"
#include "protocol/operator_libraries.h"

namespace minifyd::protocol {
namespace {

using nlohmann::json;

Expected<std::uint64_t> read_id(const JsonView& view) {
  std::int64_t id = 0;
  if (auto read = view.read("id", id); !read) return read.error();
  if (id < 0) return view.error("id: must not be negative");
  return static_cast<std::uint64_t>(id);
}

Expected<std::string> read_type(const JsonView& view) {
  if (!view.raw().is_object())
    return view.error(std::string("a message is a JSON object, got ") + describe_json_type(view.raw()));
  std::string type;
  if (auto read = view.read("type", type); !read) return read.error();
  return type;
}

// An error unless the message's type is `expected` (`what` names that message in the error).
Expected<void> require_type(const JsonView& view, const std::string& expected, const std::string& what) {
  auto type = read_type(view);
  if (!type) return type.error();
  if (*type != expected) return view.error("type: expected " + what + ", got '" + *type + "'");
  return {};
}

// The graph is decoded (and validated) by the worker, so here it only has to be an object.
Expected<json> read_graph(const JsonView& view) {
  auto graph = view.field("graph");
  if (!graph) return graph.error();
  if (auto object = graph->as_object(); !object) return object.error();
  return graph->raw();
}

// "vouched": {"HASH": [device, inode, size, ctime_ns]}, absent when empty.
Expected<void> decode_vouched(const JsonView& view, VouchedBlobs& vouched) {
  auto member = view.optional_field("vouched");
  if (!member) return member.error();
  if (!*member) return {};
  auto object = (*member)->as_object();
  if (!object) return object.error();
  for (const auto& [hash, identity] : **object) {
    const nlohmann::json& fields = identity;
    if (!fields.is_array() || fields.size() != 4 || !fields[0].is_number_unsigned() ||
        !fields[1].is_number_unsigned() || !fields[2].is_number_unsigned() || !fields[3].is_number_integer())
      return view.error("vouched." + hash + ": expected [device, inode, size, ctime_ns]");
    vouched[hash] = FileIdentity{fields[0].get<std::uint64_t>(), fields[1].get<std::uint64_t>(),
                                 fields[2].get<std::uint64_t>(), fields[3].get<std::int64_t>()};
  }
  return {};
}

// The request's members every graph request carries, vouched blobs and operator libraries when there are any.
template <class Request>
json graph_request_message(std::string_view type, const Request& request) {
  json message{{"type", type}, {"id", request.id}, {"graph", request.graph}, {"store", request.store}};
  for (const auto& [hash, identity] : request.vouched)
    message["vouched"][hash] = json::array({identity.device, identity.inode, identity.size, identity.ctime_ns});
  encode_op_libraries(request.op_libraries, message);
  return message;
}

// The fields every graph-carrying request has: id, graph, store, the vouched blobs and the operator libraries.
template <class Request>
Expected<Request> decode_graph_request(const JsonView& view) {
  Request request;
  auto id = read_id(view);
  if (!id) return id.error();
  request.id = *id;
  auto graph = read_graph(view);
  if (!graph) return graph.error();
  request.graph = std::move(*graph);
  if (auto read = view.read("store", request.store); !read) return read.error();
  if (auto read = decode_vouched(view, request.vouched); !read) return read.error();
  auto libraries = decode_op_libraries(view);
  if (!libraries) return libraries.error();
  request.op_libraries = std::move(*libraries);
  return request;
}

// The backend and its options, which evaluate and analyze requests both carry.
template <class Request>
Expected<Request> decode_backend_request(const JsonView& view) {
  auto request = decode_graph_request<Request>(view);
  if (!request) return request.error();
  json_fields::Reader reader(view);
  reader("backend", request->backend);
  reader("backend_options", request->backend_options, {});
  if (!reader.status()) return reader.status().error();
  return request;
}

Expected<EvaluateRequest> decode_evaluate(const JsonView& view) {
  auto request = decode_backend_request<EvaluateRequest>(view);
  if (!request) return request.error();
  json_fields::Reader reader(view);
  reader("accuracy", request->accuracy, AccuracyMode::off);
  if (!reader.status()) return reader.status().error();
  if (auto read = view.read_optional("nan_check", request->nan_check); !read) return read.error();
  if (auto read = decode_optional_member(view, "bisect", request->bisect); !read) return read.error();
  if (auto read = decode_optional_member(view, "output_code", request->output_code); !read) return read.error();
  if (request->output_code && *request->output_code != output_code_run && *request->output_code != output_code_compile)
    return view.error("output_code: unknown mode '" + *request->output_code + "' (run, compile)");
  if (auto read = view.read_optional("compile_threads", request->compile_threads); !read) return read.error();
  if (request->compile_threads == 0) return view.error("compile_threads: expected 1 or more processes");
  return request;
}

Expected<AnalyzeRequest> decode_analyze(const JsonView& view) {
  auto request = decode_backend_request<AnalyzeRequest>(view);
  if (!request) return request.error();
  auto nodes = view.field("nodes");
  if (!nodes) return nodes.error();
  if (auto read = json_fields::from_json(*nodes, request->nodes); !read) return read.error();
  return request;
}

Expected<PropagateRequest> decode_propagate(const JsonView& view) {
  auto request = decode_graph_request<PropagateRequest>(view);
  if (!request) return request.error();
  if (auto read = view.read_optional("for_analysis", request->for_analysis); !read) return read.error();
  return request;
}

// The analyze reply's members besides type and id.
constexpr auto analyze_reply_fields = [](auto& reply, auto&& field) {
  field("exposure", reply.exposure);
  field("compiled_failure", reply.compiled_failure);
  field("eager_failure", reply.eager_failure);
  field("values", reply.values);
  field("compile_ms", reply.compile_ms);
  field("run_ms", reply.run_ms);
  field("retiring", reply.retiring, false);
};

Expected<EvaluateReply> decode_evaluate_reply(const JsonView& view, std::uint64_t id) {
  EvaluateReply reply;
  reply.id = id;
  auto verdict_view = view.field("verdict");
  if (!verdict_view) return verdict_view.error();
  auto verdict = decode_verdict(verdict_view->raw());
  if (!verdict) return verdict.error().with_context("verdict");
  reply.verdict = std::move(*verdict);
  for (auto [name, into] : {std::pair{"load_ms", &reply.load_ms}, std::pair{"compile_ms", &reply.compile_ms},
                            std::pair{"run_ms", &reply.run_ms}, std::pair{"check_ms", &reply.check_ms},
                            std::pair{"device_wait_ms", &reply.device_wait_ms},
                            std::pair{"start_wait_ms", &reply.start_wait_ms}})
    if (auto read = view.read_optional(name, *into); !read) return read.error();
  if (auto read = view.read_optional("retiring", reply.retiring); !read) return read.error();
  if (auto read = decode_optional_member(view, "bisect", reply.bisect); !read) return read.error();
  if (auto read = decode_optional_member(view, "output_code", reply.output_code); !read) return read.error();
  return reply;
}

Expected<PropagateReply> decode_propagate_reply(const JsonView& view, std::uint64_t id) {
  PropagateReply reply;
  reply.id = id;
  if (auto read = view.read("root", reply.root); !read) return read.error();
  if (auto values = view.append_items("values", decode_propagated_value, reply.values); !values) return values.error();
  auto failure = view.optional_field("eager_failure");
  if (!failure) return failure.error();
  if (*failure) {
    Verdict verdict;
    if (auto read = decode(**failure, verdict); !read) return read.error();
    reply.eager_failure = std::move(verdict);
  }
  if (auto read = view.read_optional("retiring", reply.retiring); !read) return read.error();
  return reply;
}

}  // namespace

Expected<nlohmann::json> parse_worker_request_line(std::string_view line) {
  if (json_nesting_depth(line) > worker_max_nesting)
    return make_error(ErrorKind::invalid_input,
                      "the line nests more than the " + std::to_string(worker_max_nesting) + " levels allowed");
  return parse_json(line);
}

std::uint64_t id_of(const WorkerRequest& request) {
  return std::visit([](const auto& r) { return r.id; }, request);
}

std::uint64_t id_of(const WorkerReply& reply) {
  return std::visit([](const auto& r) { return r.id; }, reply);
}

const Verdict* compiled_failure_of(const WorkerReply& reply) {
  if (auto* evaluated = std::get_if<EvaluateReply>(&reply)) return evaluated->verdict.pass ? nullptr : &evaluated->verdict;
  if (auto* analyzed = std::get_if<AnalyzeReply>(&reply))
    return analyzed->compiled_failure ? &*analyzed->compiled_failure : nullptr;
  return nullptr;
}

bool announces_retirement(const WorkerReply& reply) {
  if (auto* evaluated = std::get_if<EvaluateReply>(&reply)) return evaluated->retiring;
  if (auto* analyzed = std::get_if<AnalyzeReply>(&reply)) return analyzed->retiring;
  if (auto* propagated = std::get_if<PropagateReply>(&reply)) return propagated->retiring;
  return false;
}

json encode(const WorkerHello& hello) {
  json devices = json::array();
  for (const DeviceInfo& device : hello.devices)
    devices.push_back({{"index", device.index}, {"name", device.name}, {"uuid", device.uuid}});
  json message{{"type", "hello"},          {"protocol", hello.protocol}, {"version", hello.version},
               {"pid", hello.pid},         {"torch_version", hello.torch_version},
               {"devices", std::move(devices)}, {"concurrency", hello.concurrency}, {"sandbox", hello.sandbox}};
  if (!hello.backends.empty()) message["backends"] = hello.backends;
  if (hello.serves_in_children) message["serves_in_children"] = true;
  return message;
}

bool serves(const std::vector<std::string>& backends, const std::string& backend) {
  if (backends.empty()) return true;
  static constexpr std::string_view plugin_prefix = "plugin:";
  std::string family = backend.rfind(plugin_prefix, 0) == 0 ? "plugin" : backend;
  return std::find(backends.begin(), backends.end(), family) != backends.end();
}

VouchedBlobs vouched_for(const VouchedBlobs& vouched, const GraphDocument& document) {
  VouchedBlobs named;
  if (vouched.empty()) return named;
  for (const std::string& hash : document.blob_hashes())
    if (auto found = vouched.find(hash); found != vouched.end()) named.insert(*found);
  return named;
}

json encode(const WorkerRequest& request) {
  return std::visit(
      [](const auto& r) -> json {
        using T = std::decay_t<decltype(r)>;
        if constexpr (std::is_same_v<T, EvaluateRequest>) {
          json message = graph_request_message("evaluate", r);
          message["backend"] = r.backend;
          message["backend_options"] = r.backend_options;
          message["accuracy"] = to_string(r.accuracy);
          message["nan_check"] = r.nan_check;
          if (r.bisect) message["bisect"] = encode(*r.bisect);
          if (r.output_code) message["output_code"] = *r.output_code;
          if (r.compile_threads > 1) message["compile_threads"] = r.compile_threads;
          return message;
        } else if constexpr (std::is_same_v<T, PropagateRequest>) {
          json message = graph_request_message("propagate", r);
          message["for_analysis"] = r.for_analysis;
          return message;
        } else if constexpr (std::is_same_v<T, AnalyzeRequest>) {
          json message = graph_request_message("analyze", r);
          message["backend"] = r.backend;
          message["backend_options"] = r.backend_options;
          message["nodes"] = r.nodes;
          return message;
        } else if constexpr (std::is_same_v<T, ShutdownRequest>)
          return {{"type", "shutdown"}, {"id", r.id}};
        else
          return {{"type", "cancel"}, {"id", r.id}};
      },
      request);
}

json encode(const WorkerReply& reply) {
  return std::visit(
      [](const auto& r) -> json {
        using T = std::decay_t<decltype(r)>;
        if constexpr (std::is_same_v<T, EvaluateReply>) {
          json message{{"type", "verdict"}, {"id", r.id}, {"verdict", encode(r.verdict)},
                       {"compile_ms", r.compile_ms}, {"run_ms", r.run_ms}};
          if (r.load_ms > 0) message["load_ms"] = r.load_ms;
          if (r.check_ms > 0) message["check_ms"] = r.check_ms;
          if (r.device_wait_ms > 0) message["device_wait_ms"] = r.device_wait_ms;
          if (r.start_wait_ms > 0) message["start_wait_ms"] = r.start_wait_ms;
          if (r.retiring) message["retiring"] = true;
          if (r.bisect) message["bisect"] = encode(*r.bisect);
          if (r.output_code) message["output_code"] = encode(*r.output_code);
          return message;
        } else if constexpr (std::is_same_v<T, PropagateReply>) {
          json values = json::array();
          for (const PropagatedValue& value : r.values) values.push_back(encode(value));
          json message{{"type", "propagated"}, {"id", r.id}, {"values", std::move(values)}, {"root", r.root}};
          if (r.eager_failure) message["eager_failure"] = encode(*r.eager_failure);
          if (r.retiring) message["retiring"] = true;
          return message;
        } else if constexpr (std::is_same_v<T, AnalyzeReply>) {
          return encode_fields(r, analyze_reply_fields, json{{"type", "analyzed"}, {"id", r.id}});
        } else {
          return {{"type", "error"}, {"id", r.id}, {"message", r.message}};
        }
      },
      reply);
}

json encode(const Readiness& readiness) { return {{"type", "readiness"}, {"ready", readiness.ready}}; }

bool is_readiness(const json& message) {
  auto type = read_type(JsonView(message));
  return type && *type == "readiness";
}

Expected<Readiness> decode_readiness(const json& message) {
  JsonView view(message);
  if (auto typed = require_type(view, "readiness", "a readiness line"); !typed) return typed.error();
  Readiness readiness;
  if (auto read = view.read("ready", readiness.ready); !read) return read.error();
  return readiness;
}

Expected<WorkerHello> decode_hello(const json& message) {
  JsonView view(message);
  if (auto typed = require_type(view, "hello", "the worker's hello"); !typed) return typed.error();
  WorkerHello hello;
  std::int64_t version = 0;
  if (auto read = view.read("protocol", hello.protocol); !read) return read.error();
  if (auto read = view.read("version", version); !read) return read.error();
  if (hello.protocol != worker_protocol_name || version != worker_protocol_version)
    return make_error(ErrorKind::unsupported,
                      "worker speaks " + hello.protocol + " version " + std::to_string(version) +
                          ", this coordinator speaks " + worker_protocol_name + " version " +
                          std::to_string(worker_protocol_version));
  hello.version = static_cast<int>(version);
  if (auto read = view.read("pid", hello.pid); !read) return read.error();
  if (auto read = view.read("torch_version", hello.torch_version); !read) return read.error();
  auto devices = view.field("devices");
  if (!devices) return devices.error();
  auto count = devices->array_size();
  if (!count) return count.error();
  for (std::size_t i = 0; i < *count; ++i) {
    JsonView item = devices->item(i);
    DeviceInfo device;
    std::int64_t index = 0;
    if (auto read = item.read("index", index); !read) return read.error();
    device.index = static_cast<int>(index);
    if (auto read = item.read("name", device.name); !read) return read.error();
    if (auto read = item.read_optional("uuid", device.uuid); !read) return read.error();
    hello.devices.push_back(std::move(device));
  }
  if (auto read = view.read_optional("concurrency", hello.concurrency); !read) return read.error();
  if (hello.concurrency == 0) return view.error("concurrency: must be at least 1");
  if (auto read = view.read_optional("serves_in_children", hello.serves_in_children); !read) return read.error();
  if (auto backends = view.optional_field("backends"); !backends) {
    return backends.error();
  } else if (*backends) {
    auto backend_count = (*backends)->array_size();
    if (!backend_count) return backend_count.error();
    for (std::size_t i = 0; i < *backend_count; ++i) {
      auto name = (*backends)->item(i).as_string();
      if (!name) return name.error();
      hello.backends.push_back(*name);
    }
  }
  if (auto sandbox = view.optional_field("sandbox"); !sandbox) return sandbox.error();
  else if (*sandbox) hello.sandbox = (*sandbox)->raw();
  return hello;
}

Expected<WorkerRequest> decode_request(const json& message) {
  JsonView view(message);
  auto type = read_type(view);
  if (!type) return type.error();
  if (*type == "evaluate") {
    auto request = decode_evaluate(view);
    if (!request) return request.error();
    return WorkerRequest(std::move(*request));
  }
  if (*type == "propagate") {
    auto request = decode_propagate(view);
    if (!request) return request.error();
    return WorkerRequest(std::move(*request));
  }
  if (*type == "analyze") {
    auto request = decode_analyze(view);
    if (!request) return request.error();
    return WorkerRequest(std::move(*request));
  }
  if (*type == "shutdown" || *type == "cancel") {
    auto id = read_id(view);
    if (!id) return id.error();
    return *type == "shutdown" ? WorkerRequest(ShutdownRequest{*id}) : WorkerRequest(CancelRequest{*id});
  }
  return view.error("type: unknown request type '" + *type + "' (evaluate, propagate, analyze, shutdown, cancel)");
}

Expected<WorkerReply> decode_reply(const json& message) {
  JsonView view(message);
  auto type = read_type(view);
  if (!type) return type.error();
  auto id = read_id(view);
  if (!id) return id.error();
  if (*type == "verdict") {
    auto reply = decode_evaluate_reply(view, *id);
    if (!reply) return reply.error();
    return WorkerReply(std::move(*reply));
  }
  if (*type == "propagated") {
    auto reply = decode_propagate_reply(view, *id);
    if (!reply) return reply.error();
    return WorkerReply(std::move(*reply));
  }
  if (*type == "analyzed") {
    AnalyzeReply reply;
    reply.id = *id;
    if (auto read = decode_fields(view, reply, analyze_reply_fields); !read) return read.error();
    return WorkerReply(std::move(reply));
  }
  if (*type == "error") {
    ErrorReply reply{*id, {}};
    if (auto read = view.read("message", reply.message); !read) return read.error();
    return WorkerReply(std::move(reply));
  }
  return view.error("type: unknown reply type '" + *type + "' (verdict, propagated, analyzed, error)");
}

nlohmann::json encode(const PropagatedValue& value) {
  return {{"node", value.node}, {"storage", encode_storage_ref(value.storage)}, {"tensor", encode_tensor_meta(value.tensor)}};
}

Expected<PropagatedValue> decode_propagated_value(const JsonView& view) {
  PropagatedValue value;
  if (auto read = view.read("node", value.node); !read) return read.error();
  auto storage = view.field("storage");
  if (!storage) return storage.error();
  auto storage_ref = decode_storage_ref(*storage);
  if (!storage_ref) return storage_ref.error();
  value.storage = std::move(*storage_ref);
  auto tensor = view.field("tensor");
  if (!tensor) return tensor.error();
  auto meta = decode_tensor_meta(*tensor);
  if (!meta) return meta.error();
  value.tensor = std::move(*meta);
  return value;
}

}  // namespace minifyd::protocol
