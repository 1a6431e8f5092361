// Decoding and encoding of graph.json, version 1.
#include "common/graph_codec.h"

#include <algorithm>
#include <unordered_map>

#include "common/file_util.h"
#include "common/graph_targets.h"
#include "common/json_view.h"
#include "common/tensor_codec.h"

namespace minifyd {
namespace {

using nlohmann::json;

// Decodes the argument values of one node, resolving node references against the nodes decoded
// so far; `positions` (every name in the document) tells "later" from "unknown".
class ValueDecoder {
 public:
  ValueDecoder(const Graph& graph, const std::unordered_map<std::string, std::size_t>& positions,
               std::size_t current)
      : graph_(graph), positions_(positions), current_(current) {}

  Expected<Value> decode(const JsonView& view) const {
    const json& raw = view.raw();
    switch (raw.type()) {
      case json::value_t::null: return Value(NoneValue{});
      case json::value_t::boolean: return Value(raw.get<bool>());
      case json::value_t::number_integer:
      case json::value_t::number_unsigned: {
        auto number = view.as_int();
        if (!number) return number.error();
        return Value(*number);
      }
      case json::value_t::number_float: return Value(raw.get<double>());
      case json::value_t::string: return Value(raw.get<std::string>());
      case json::value_t::array: return decode_list(view, false);
      case json::value_t::object: return decode_tagged(view);
      default: return view.error("unsupported JSON value");
    }
  }

 private:
  Expected<Value> decode_list(const JsonView& view, bool is_tuple) const {
    auto size = view.array_size();
    if (!size) return size.error();
    ListValue list{{}, is_tuple};
    list.items.reserve(*size);
    for (std::size_t i = 0; i < *size; ++i) {
      auto item = decode(view.item(i));
      if (!item) return item.error();
      list.items.push_back(std::move(*item));
    }
    return Value(std::move(list));
  }

  Expected<Value> decode_tagged(const JsonView& view) const {
    const json& raw = view.raw();
    if (raw.size() != 1)
      return view.error("an encoded value is an object with exactly one key (tuple, node, float, "
                        "dtype, device, layout, memory_format), got " + std::to_string(raw.size()));
    const std::string tag = raw.begin().key();
    static constexpr const char* tags[] = {"tuple", "node", "float", "dtype", "device", "layout", "memory_format"};
    if (std::find(std::begin(tags), std::end(tags), tag) == std::end(tags))
      return view.error("unknown value encoding '" + tag +
                        "' (expected tuple, node, float, dtype, device, layout or memory_format)");
    auto inner = view.field(tag);
    if (!inner) return inner.error();
    if (tag == "tuple") return decode_list(*inner, true);
    auto text = inner->as_string();
    if (!text) return text.error();
    if (tag == "node") return resolve(view, *text);
    if (tag == "float") {
      auto number = view.as_float();
      if (!number) return number.error();
      return Value(*number);
    }
    if (tag == "dtype") {
      if (auto dtype = parse_dtype(*text)) return Value(DTypeValue{*dtype});
      return inner->error("unknown dtype '" + *text + "' (known: " + dtype_names() + ")");
    }
    if (tag == "device") {
      if (is_valid_device(*text)) return Value(DeviceValue{*text});
      return inner->error("unknown device '" + *text + "' (expected cpu, cuda, cuda:N or meta)");
    }
    if (tag == "layout") {
      if (is_valid_layout(*text)) return Value(LayoutValue{*text});
      return inner->error("unknown layout '" + *text + "' (known: " + layout_names() + ")");
    }
    if (is_valid_memory_format(*text)) return Value(MemoryFormatValue{*text});
    return inner->error("unknown memory_format '" + *text + "' (known: " + memory_format_names() + ")");
  }

  Expected<Value> resolve(const JsonView& view, const std::string& name) const {
    if (Node* node = graph_.find(name)) return Value(NodeRef{node});
    auto position = positions_.find(name);
    if (position == positions_.end()) return view.error("reference to unknown node '" + name + "'");
    if (position->second == current_) return view.error("node references itself (a cycle)");
    return view.error("reference to node '" + name +
                      "' which comes later (nodes must be in topological order; a cycle?)");
  }

  const Graph& graph_;
  const std::unordered_map<std::string, std::size_t>& positions_;
  std::size_t current_;
};


// Decodes nodes[index] into the graph.
Expected<void> decode_node(const JsonView& view, std::size_t index, Graph& graph,
                           const std::unordered_map<std::string, std::size_t>& positions) {
  auto name_view = view.field("name");
  if (!name_view) return name_view.error();
  auto name = name_view->as_string();
  if (!name) return name.error();
  const std::string context = "node " + node_label(*name) + " (nodes[" + std::to_string(index) + "])";
  auto fail = [&](const Error& error) { return error.with_context(context); };
  if (auto refused = name_refusal(*name)) return fail(make_error(ErrorKind::invalid_input, "name: " + *refused));

  JsonView node(view.raw());  // paths inside a node are relative to it; the context names it
  auto op_view = node.field("op");
  if (!op_view) return fail(op_view.error());
  auto op_name = op_view->as_string();
  if (!op_name) return fail(op_name.error());
  auto op = parse_opcode(*op_name);
  if (!op) {
    if (*op_name == "call_module" || *op_name == "call_method")
      return fail(op_view->error(*op_name + " is not supported: export an aten-level graph (make_fx) instead"));
    return fail(op_view->error("unknown op kind '" + *op_name +
                               "' (expected placeholder, get_attr, call_function or output)"));
  }

  std::string target;
  if (*op == OpCode::call_function || *op == OpCode::get_attr) {
    auto target_view = node.field("target");
    if (!target_view) return fail(target_view.error());
    auto text = target_view->as_string();
    if (!text) return fail(text.error());
    target = *text;
  }

  ValueDecoder values(graph, positions, index);
  std::vector<Value> args;
  auto args_view = node.optional_field("args");
  if (!args_view) return fail(args_view.error());
  if (*args_view) {
    auto size = (*args_view)->array_size();
    if (!size) return fail(size.error());
    for (std::size_t i = 0; i < *size; ++i) {
      auto value = values.decode((*args_view)->item(i));
      if (!value) return fail(value.error());
      args.push_back(std::move(*value));
    }
  }
  Kwargs kwargs;
  auto kwargs_view = node.optional_field("kwargs");
  if (!kwargs_view) return fail(kwargs_view.error());
  if (*kwargs_view) {
    auto object = (*kwargs_view)->as_object();
    if (!object) return fail(object.error());
    for (const auto& [key, unused] : **object) {
      auto value = values.decode(*(*kwargs_view)->field(key));
      if (!value) return fail(value.error());
      kwargs.emplace_back(key, std::move(*value));
    }
  }
  auto created = graph.create_node(*op, *name, std::move(target), std::move(args), std::move(kwargs));
  if (!created) return fail(created.error().with_context("name"));
  return {};
}

Expected<void> decode_nodes(const JsonView& nodes_view, Graph& graph) {
  auto count = nodes_view.array_size();
  if (!count) return count.error();
  std::unordered_map<std::string, std::size_t> positions;
  for (std::size_t i = 0; i < *count; ++i) {
    JsonView item = nodes_view.item(i);
    const json& raw = item.raw();
    if (raw.is_object() && raw.contains("name") && raw["name"].is_string())
      positions.emplace(raw["name"].get<std::string>(), i);
  }
  for (std::size_t i = 0; i < *count; ++i) {
    JsonView item = nodes_view.item(i);
    if (!item.raw().is_object())
      return item.error(std::string("expected a node object, got ") + describe_json_type(item.raw()));
    auto decoded = decode_node(item, i, graph, positions);
    if (!decoded) return decoded.error();
  }
  return {};
}

}  // namespace

json encode_value(const Value& value, const std::function<json(const Node*)>& encode_node) {
  return std::visit(
      [&](const auto& alternative) -> json {
        using T = std::decay_t<decltype(alternative)>;
        if constexpr (std::is_same_v<T, NoneValue>) return nullptr;
        else if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, std::int64_t> ||
                           std::is_same_v<T, std::string>) return alternative;
        else if constexpr (std::is_same_v<T, double>) return encode_float(alternative);
        else if constexpr (std::is_same_v<T, NodeRef>) return json{{"node", encode_node(alternative.node)}};
        else if constexpr (std::is_same_v<T, ListValue>) {
          json items = json::array();
          for (const Value& item : alternative.items) items.push_back(encode_value(item, encode_node));
          return alternative.is_tuple ? json{{"tuple", std::move(items)}} : items;
        } else if constexpr (std::is_same_v<T, DTypeValue>) return json{{"dtype", to_string(alternative.dtype)}};
        else if constexpr (std::is_same_v<T, DeviceValue>) return json{{"device", alternative.name}};
        else if constexpr (std::is_same_v<T, LayoutValue>) return json{{"layout", alternative.name}};
        else return json{{"memory_format", alternative.name}};
      },
      value.data);
}

Expected<GraphDocument> decode_graph_document(const json& document_json, const OperatorScope& operators) {
  JsonView root(document_json);
  if (!document_json.is_object())
    return root.error(std::string("a graph document is a JSON object, got ") + describe_json_type(document_json));
  auto format = root.field("format");
  if (!format) return format.error();
  auto format_name = format->as_string();
  if (!format_name) return format_name.error();
  if (*format_name != graph_format_name)
    return format->error("'" + *format_name + "' is not a minifyd graph (expected '" + graph_format_name + "')");
  auto version = root.field("version");
  if (!version) return version.error();
  auto version_number = version->as_int();
  if (!version_number) return version_number.error();
  if (*version_number != graph_format_version)
    return make_error(ErrorKind::unsupported, "version: graph format version " + std::to_string(*version_number) +
                                                  " is not supported (this build reads version " +
                                                  std::to_string(graph_format_version) + ")");

  GraphDocument document;
  auto storages = root.field("storages");
  if (!storages) return storages.error();
  auto storage_count = storages->array_size();
  if (!storage_count) return storage_count.error();
  for (std::size_t i = 0; i < *storage_count; ++i) {
    auto storage = decode_storage_ref(storages->item(i));
    if (!storage) return storage.error();
    document.storages.push_back(std::move(*storage));
  }

  auto inputs = root.field("inputs");
  if (!inputs) return inputs.error();
  auto input_count = inputs->array_size();
  if (!input_count) return input_count.error();
  for (std::size_t i = 0; i < *input_count; ++i) {
    auto input = decode_graph_input(inputs->item(i));
    if (!input) return input.error();
    document.inputs.push_back(std::move(*input));
  }

  auto constants = root.optional_field("constants");
  if (!constants) return constants.error();
  if (*constants) {
    auto object = (*constants)->as_object();
    if (!object) return object.error();
    for (const auto& [name, unused] : **object) {
      auto tensor = decode_tensor_meta(*(*constants)->field(name));
      if (!tensor) return tensor.error();
      document.constants.emplace(name, std::move(*tensor));
    }
  }

  auto nodes = root.field("nodes");
  if (!nodes) return nodes.error();
  auto decoded = decode_nodes(*nodes, document.graph);
  if (!decoded) return decoded.error();

  auto problems = document_problems(document, operators);
  if (!problems.empty()) {
    std::string message = problems.front();
    for (std::size_t i = 1; i < problems.size(); ++i) message += "\n" + problems[i];
    return make_error(ErrorKind::invalid_input, message);
  }
  return document;
}

Expected<GraphDocument> parse_graph_document(std::string_view text, const OperatorScope& operators) {
  auto parsed = parse_json(text);
  if (!parsed) return parsed.error();
  return decode_graph_document(*parsed, operators);
}

Expected<GraphDocument> load_graph_dir(const std::filesystem::path& dir, const OperatorScope& operators) {
  std::filesystem::path file = dir / graph_file_name;
  auto json = read_json_file(file);
  if (!json) return json.error();
  auto document = decode_graph_document(*json, operators);
  if (!document) return document.error().with_context(file.string());
  return document;
}

json encode_graph_document(const GraphDocument& document) {
  json storages = json::array();
  for (const StorageRef& storage : document.storages)
    storages.push_back(encode_storage_ref(storage));
  json inputs = json::array();
  for (const GraphInput& input : document.inputs) inputs.push_back(encode_graph_input(input));
  json constants = json::object();
  for (const auto& [name, tensor] : document.constants) constants[name] = encode_tensor_meta(tensor);
  auto by_name = [](const Node* node) { return json(node->name()); };
  json nodes = json::array();
  for (const Node* node : document.graph.nodes()) {
    json entry{{"name", node->name()}, {"op", to_string(node->op())}};
    if (node->op() == OpCode::call_function || node->op() == OpCode::get_attr) entry["target"] = node->target();
    if (!node->args().empty()) {
      json args = json::array();
      for (const Value& arg : node->args()) args.push_back(encode_value(arg, by_name));
      entry["args"] = std::move(args);
    }
    if (!node->kwargs().empty()) {
      json kwargs = json::object();
      for (const auto& [key, value] : node->kwargs()) kwargs[key] = encode_value(value, by_name);
      entry["kwargs"] = std::move(kwargs);
    }
    nodes.push_back(std::move(entry));
  }
  return json{{"format", graph_format_name}, {"version", graph_format_version},
              {"storages", std::move(storages)}, {"inputs", std::move(inputs)},
              {"constants", std::move(constants)}, {"nodes", std::move(nodes)}};
}

Expected<void> write_graph_json(const GraphDocument& document, const std::filesystem::path& dir) {
  // One array element per line keeps large graphs readable and diffable.
  json encoded = encode_graph_document(document);
  std::string text = "{\n";
  bool first_key = true;
  for (const char* key : {"format", "version", "storages", "inputs", "constants", "nodes"}) {
    text += first_key ? "  " : ",\n  ";
    first_key = false;
    text += json(key).dump() + ": ";
    const json& value = encoded[key];
    if (value.is_array() && !value.empty()) {
      text += "[\n";
      for (std::size_t i = 0; i < value.size(); ++i) text += (i ? ",\n    " : "    ") + value[i].dump();
      text += "\n  ]";
    } else if (value.is_object() && !value.empty()) {
      text += "{\n";
      bool first = true;
      for (const auto& [name, item] : value.items()) {
        text += (first ? "    " : ",\n    ") + json(name).dump() + ": " + item.dump();
        first = false;
      }
      text += "\n  }";
    } else {
      text += value.dump();
    }
  }
  text += "\n}\n";
  return write_file_atomic(dir / graph_file_name, text);
}

}  // namespace minifyd
