// Rendering a graph document as DOT.
#include "common/graph_dot.h"

#include <cstdio>
#include <string_view>
#include <utility>
#include <vector>

namespace minifyd {
namespace {

// The body of a DOT double-quoted string. Graphviz reads \" as a quote and keeps \\ as a pair
// (so a name's backslash can never swallow the closing quote); in labels \\ shows one backslash
// and \n breaks the line. Other control characters would be invisible or, for NUL, cut the text,
// so they become the visible \xHH. Distinct names thus stay distinct node IDs.
std::string escape(std::string_view text) {
  std::string escaped;
  for (char c : text) {
    switch (c) {
      case '"': escaped += "\\\""; break;
      case '\\': escaped += "\\\\"; break;
      case '\n': escaped += "\\n"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
          char hex[8];
          std::snprintf(hex, sizeof hex, "\\x%02x", static_cast<unsigned char>(c));
          escaped += hex;
        } else {
          escaped += c;
        }
    }
  }
  return escaped;
}

std::string dot_string(std::string_view text) { return "\"" + escape(text) + "\""; }

// "float32[2, 3]", as repro.py describes tensors.
std::string tensor_text(const TensorMeta& tensor) {
  std::string text = std::string(to_string(tensor.dtype)) + "[";
  for (std::size_t i = 0; i < tensor.shape.size(); ++i) text += (i ? ", " : "") + std::to_string(tensor.shape[i]);
  return text + "]";
}

// The tensor a placeholder or get_attr node stands for, when the document has it.
const TensorMeta* tensor_of(const GraphDocument& document, const Node& node, std::size_t placeholder_index) {
  if (node.op() == OpCode::placeholder)
    return placeholder_index < document.inputs.size() ? input_tensor(document.inputs[placeholder_index]) : nullptr;
  if (node.op() != OpCode::get_attr) return nullptr;
  auto constant = document.constants.find(node.target());
  return constant == document.constants.end() ? nullptr : &constant->second;
}

// The label lines and the graphviz attributes that style each kind of node.
std::string node_statement(const Node& node, const TensorMeta* tensor) {
  std::string label = node.name();
  std::string style;
  switch (node.op()) {
    case OpCode::placeholder:
      label += "\n" + (tensor ? tensor_text(*tensor) : std::string("input"));
      style = "shape=box, style=\"rounded,filled\", fillcolor=\"#cfe2f3\"";
      break;
    case OpCode::get_attr:
      label += "\n" + (tensor ? tensor_text(*tensor) : std::string("constant"));
      if (node.target() != node.name()) label += "\n" + node.target();
      style = "shape=box, style=filled, fillcolor=\"#e6e6e6\"";
      break;
    case OpCode::call_function:
      label += "\n" + node.target();
      style = "shape=ellipse";
      break;
    case OpCode::output:
      style = "shape=box, style=\"bold,filled\", fillcolor=\"#d9ead3\"";
      break;
  }
  return "  " + dot_string(node.name()) + " [label=" + dot_string(label) + ", " + style + "];\n";
}

// (referenced node, where it sits in the user's arguments) for every reference, in order.
using Reference = std::pair<const Node*, std::string>;

void collect_references(const Value& value, const std::string& where, std::vector<Reference>& references) {
  if (value.is<NodeRef>()) {
    references.emplace_back(value.as<NodeRef>().node, where);
  } else if (value.is<ListValue>()) {
    const auto& items = value.as<ListValue>().items;
    for (std::size_t i = 0; i < items.size(); ++i)
      collect_references(items[i], where + "[" + std::to_string(i) + "]", references);
  }
}

std::vector<Reference> references_of(const Node& node) {
  std::vector<Reference> references;
  for (std::size_t i = 0; i < node.args().size(); ++i) collect_references(node.args()[i], std::to_string(i), references);
  for (const auto& [name, value] : node.kwargs()) collect_references(value, name, references);
  return references;
}

}  // namespace

std::string graph_to_dot(const GraphDocument& document) {
  std::string dot = "digraph minifyd {\n  node [fontname=\"monospace\"];\n";
  std::string edges;
  std::size_t placeholder_index = 0;
  for (const Node* node : document.graph.nodes()) {
    const TensorMeta* tensor = tensor_of(document, *node, placeholder_index);
    if (node->op() == OpCode::placeholder) ++placeholder_index;
    dot += node_statement(*node, tensor);
    std::vector<Reference> references = references_of(*node);
    for (const auto& [input, where] : references) {
      edges += "  " + dot_string(input->name()) + " -> " + dot_string(node->name());
      edges += references.size() > 1 ? " [label=" + dot_string(where) + "];\n" : ";\n";
    }
  }
  return dot + edges + "}\n";
}

}  // namespace minifyd
