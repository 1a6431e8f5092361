// Graph construction, use-list maintenance, copying and lint.
#include "common/graph.h"

#include <algorithm>
#include <iterator>
#include <unordered_set>

#include "common/graph_targets.h"

namespace minifyd {

const char* to_string(OpCode op) {
  switch (op) {
    case OpCode::placeholder: return "placeholder";
    case OpCode::get_attr: return "get_attr";
    case OpCode::call_function: return "call_function";
    case OpCode::output: return "output";
  }
  return "unknown";
}

std::optional<OpCode> parse_opcode(std::string_view name) {
  for (OpCode op : {OpCode::placeholder, OpCode::get_attr, OpCode::call_function, OpCode::output})
    if (name == to_string(op)) return op;
  return std::nullopt;
}

bool is_operator_name(std::string_view target) {
  std::size_t colons = target.find("::");
  if (colons == std::string_view::npos || !is_identifier(target.substr(0, colons))) return false;
  std::string_view rest = target.substr(colons + 2);
  std::size_t dot = rest.find('.');
  if (dot == std::string_view::npos) return is_identifier(rest);
  return is_identifier(rest.substr(0, dot)) && is_identifier(rest.substr(dot + 1));
}

namespace {

// Indexed by SymIntOp.
constexpr std::string_view symint_targets[] = {"operator.add",      "operator.sub", "operator.mul",
                                               "operator.floordiv", "operator.mod", "operator.neg"};

}  // namespace

std::optional<SymIntOp> symint_op(std::string_view target) {
  for (std::size_t i = 0; i < std::size(symint_targets); ++i)
    if (symint_targets[i] == target) return static_cast<SymIntOp>(i);
  return std::nullopt;
}

std::string_view symint_target(SymIntOp op) { return symint_targets[static_cast<std::size_t>(op)]; }

std::string LintError::to_string() const {
  return node.empty() ? message : "node " + node_label(node) + ": " + message;
}

std::vector<Node*> Node::input_nodes() const {
  std::vector<Node*> inputs;
  auto add = [&](Node* node) {
    if (std::find(inputs.begin(), inputs.end(), node) == inputs.end()) inputs.push_back(node);
  };
  for (const Value& arg : args_) for_each_node_ref(arg, add);
  for (const auto& [key, value] : kwargs_) for_each_node_ref(value, add);
  return inputs;
}

void Graph::add_uses(Node* user) {
  for (Node* input : user->input_nodes()) input->users_.push_back(user);
}

void Graph::remove_uses(Node* user) {
  for (Node* input : user->input_nodes()) {
    auto& users = input->users_;
    users.erase(std::remove(users.begin(), users.end(), user), users.end());
  }
}

Expected<Node*> Graph::create_node(OpCode op, std::string name, std::string target,
                                   std::vector<Value> args, Kwargs kwargs, Node* before) {
  if (by_name_.count(name) != 0)
    return make_error(ErrorKind::invalid_input, "duplicate node name '" + name + "'");
  auto node = std::unique_ptr<Node>(new Node(op, std::move(name), std::move(target)));
  node->args_ = std::move(args);
  node->kwargs_ = std::move(kwargs);
  Node* raw = node.get();
  auto position = nodes_.end();
  if (before != nullptr)
    position = std::find_if(nodes_.begin(), nodes_.end(),
                            [&](const std::unique_ptr<Node>& n) { return n.get() == before; });
  nodes_.insert(position, std::move(node));
  by_name_.emplace(raw->name_, raw);
  add_uses(raw);
  return raw;
}

Expected<void> Graph::erase_node(Node* node) {
  if (!node->users_.empty()) {
    std::string names;
    for (Node* user : node->users_) names += (names.empty() ? "'" : ", '") + user->name() + "'";
    return make_error(ErrorKind::invalid_input, "cannot erase node '" + node->name() +
                                                    "': it still has users " + names);
  }
  remove_uses(node);
  by_name_.erase(node->name_);
  nodes_.remove_if([&](const std::unique_ptr<Node>& n) { return n.get() == node; });
  return {};
}

void Graph::set_args(Node* node, std::vector<Value> args) {
  remove_uses(node);
  node->args_ = std::move(args);
  add_uses(node);
}

void Graph::set_kwargs(Node* node, Kwargs kwargs) {
  remove_uses(node);
  node->kwargs_ = std::move(kwargs);
  add_uses(node);
}

void Graph::replace_all_uses_with(Node* old_node, Node* replacement) {
  auto swap_ref = [&](Node* n) { return n == old_node ? replacement : n; };
  for (Node* user : std::vector<Node*>(old_node->users_)) {
    std::vector<Value> args;
    for (const Value& arg : user->args_) args.push_back(map_node_refs(arg, swap_ref));
    Kwargs kwargs;
    for (const auto& [key, value] : user->kwargs_) kwargs.emplace_back(key, map_node_refs(value, swap_ref));
    remove_uses(user);
    user->args_ = std::move(args);
    user->kwargs_ = std::move(kwargs);
    add_uses(user);
  }
}

std::string Graph::unique_name(std::string_view base) const {
  std::string candidate(base);
  for (int suffix = 1; by_name_.count(candidate) != 0; ++suffix)
    candidate = std::string(base) + "_" + std::to_string(suffix);
  return candidate;
}

Node* Graph::find(std::string_view name) const {
  auto it = by_name_.find(std::string(name));
  return it == by_name_.end() ? nullptr : it->second;
}

std::vector<Node*> Graph::nodes() const {
  std::vector<Node*> all;
  all.reserve(nodes_.size());
  for (const auto& node : nodes_) all.push_back(node.get());
  return all;
}

std::vector<Node*> Graph::placeholders() const {
  std::vector<Node*> found;
  for (const auto& node : nodes_)
    if (node->op() == OpCode::placeholder) found.push_back(node.get());
  return found;
}

Node* Graph::output() const {
  for (auto it = nodes_.rbegin(); it != nodes_.rend(); ++it)
    if ((*it)->op() == OpCode::output) return it->get();
  return nullptr;
}

std::size_t Graph::index_of(const Node* node) const {
  std::size_t index = 0;
  for (const auto& candidate : nodes_) {
    if (candidate.get() == node) return index;
    ++index;
  }
  return index;
}

Graph Graph::clone() const {
  Graph copy;
  std::unordered_map<const Node*, Node*> mapping;
  auto remap = [&](Node* n) { return mapping.at(n); };
  for (const auto& node : nodes_) {
    std::vector<Value> args;
    for (const Value& arg : node->args_) args.push_back(map_node_refs(arg, remap));
    Kwargs kwargs;
    for (const auto& [key, value] : node->kwargs_) kwargs.emplace_back(key, map_node_refs(value, remap));
    // Names are unique in this graph, so creating them again cannot fail.
    Node* created = *copy.create_node(node->op_, node->name_, node->target_, std::move(args),
                                      std::move(kwargs));
    mapping.emplace(node.get(), created);
  }
  return copy;
}

std::vector<LintError> Graph::lint(const OperatorScope& operators) const {
  std::vector<LintError> errors;
  std::unordered_map<const Node*, std::size_t> position;
  std::size_t outputs = 0;
  for (const auto& owned : nodes_) {
    const Node* node = owned.get();
    auto fail = [&](std::string message) { errors.push_back({node->name(), std::move(message)}); };
    if (auto refused = name_refusal(node->name())) fail("name: " + *refused);
    for (const auto& [key, value] : node->kwargs())
      if (auto refused = name_refusal(key)) fail("kwargs: the key " + *refused);
    for (const Node* input : node->input_nodes()) {
      if (find(input->name()) != input) {
        fail("references node '" + input->name() + "' of another graph");
      } else if (position.count(input) == 0) {
        fail("references node '" + input->name() +
             "' which does not come before it; move the node after its inputs");
      } else if (input->op() == OpCode::output) {
        fail("references the output node '" + input->name() + "'");
      } else if (std::count(input->users().begin(), input->users().end(), node) != 1) {
        fail("is missing from the users of '" + input->name() + "'");
      }
    }
    switch (node->op()) {
      case OpCode::placeholder:
        if (!node->args().empty() || !node->kwargs().empty()) fail("a placeholder takes no arguments");
        break;
      case OpCode::get_attr:
        if (auto refused = attribute_path_refusal(node->target())) fail("target: " + *refused);
        if (!node->args().empty() || !node->kwargs().empty()) fail("get_attr takes no arguments");
        break;
      case OpCode::call_function:
        if (node->target() == getitem_target) {
          if (node->args().size() != 2 || !node->args()[0].is<NodeRef>() ||
              !node->args()[1].is<std::int64_t>() || !node->kwargs().empty())
            fail("getitem takes exactly (node, int index)");
        } else if (!symint_op(node->target())) {
          if (!is_operator_name(node->target()))
            fail("target '" + node->target() +
                 "' is not an operator overload such as aten::add.Tensor, nor getitem, nor SymInt arithmetic "
                 "such as operator.mul");
          else if (auto refusal = operator_refusal(node->target(), operators))
            fail(std::move(*refusal));
        }
        break;
      case OpCode::output:
        ++outputs;
        if (node->args().size() != 1 || !node->kwargs().empty())
          fail("output takes exactly one argument, the returned value");
        if (owned != nodes_.back()) fail("output must be the last node");
        if (!node->users().empty()) fail("output has users");
        break;
    }
    position.emplace(node, position.size());
  }
  if (outputs == 0) errors.push_back({"", "the graph has no output node"});
  if (outputs > 1) errors.push_back({"", "the graph has " + std::to_string(outputs) + " output nodes; it needs exactly one"});
  return errors;
}

}  // namespace minifyd
