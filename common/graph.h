// The graph IR, mirroring torch.fx: nodes owned by the graph in topological order, user lists kept
// automatically, erase refused while users remain, and lint() that reports instead of asserting.
#pragma once

#include <list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/expected.h"
#include "common/graph_targets.h"
#include "common/value.h"

namespace minifyd {

// torch.fx's call_module and call_method have no meaning in an aten-level graph and are refused.
enum class OpCode { placeholder, get_attr, call_function, output };

const char* to_string(OpCode op);
std::optional<OpCode> parse_opcode(std::string_view name);

using Kwargs = std::vector<std::pair<std::string, Value>>;

// The target of a call_function node that reads one element of a multi-output node.
inline constexpr std::string_view getitem_target = "getitem";

class Node {
 public:
  const std::string& name() const { return name_; }
  OpCode op() const { return op_; }
  // Operator name for call_function ("aten::add.Tensor", "getitem"), constant name for get_attr.
  const std::string& target() const { return target_; }
  const std::vector<Value>& args() const { return args_; }
  const Kwargs& kwargs() const { return kwargs_; }
  // Nodes that reference this one, each once, in the order they started to.
  const std::vector<Node*>& users() const { return users_; }
  // Every distinct node this node references, in order of first appearance.
  std::vector<Node*> input_nodes() const;

 private:
  friend class Graph;
  Node(OpCode op, std::string name, std::string target)
      : op_(op), name_(std::move(name)), target_(std::move(target)) {}

  OpCode op_;
  std::string name_;
  std::string target_;
  std::vector<Value> args_;
  Kwargs kwargs_;
  std::vector<Node*> users_;
};

struct LintError {
  std::string node;  // empty for errors about the graph as a whole
  std::string message;

  std::string to_string() const;
};

// Owns its nodes; Node pointers stay valid until the node is erased or the graph destroyed, and
// across moves of the graph. Not thread-safe.
class Graph {
 public:
  Graph() = default;
  Graph(Graph&&) = default;
  Graph& operator=(Graph&&) = default;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // Appends a node (or inserts it before `before`). Fails if the name is taken. Every node that
  // args and kwargs reference must belong to this graph; lint() reports order violations.
  Expected<Node*> create_node(OpCode op, std::string name, std::string target,
                              std::vector<Value> args = {}, Kwargs kwargs = {},
                              Node* before = nullptr);
  // Refuses (and changes nothing) while the node has users.
  Expected<void> erase_node(Node* node);
  void set_args(Node* node, std::vector<Value> args);
  void set_kwargs(Node* node, Kwargs kwargs);
  // Makes every user of `old_node` reference `replacement` instead.
  void replace_all_uses_with(Node* old_node, Node* replacement);

  // `base` if free, else base_1, base_2, ...
  std::string unique_name(std::string_view base) const;
  Node* find(std::string_view name) const;
  std::size_t size() const { return nodes_.size(); }
  std::vector<Node*> nodes() const;
  std::vector<Node*> placeholders() const;
  // The last output node, or nullptr when there is none.
  Node* output() const;
  // Position of node in topological order (linear time).
  std::size_t index_of(const Node* node) const;

  // A deep copy with identical names and structure.
  Graph clone() const;

  // Structural problems, each naming the node and what to fix. Empty means well-formed. `operators`:
  // the namespaces the graph's job adds to the rule's (graph_targets.h).
  std::vector<LintError> lint(const OperatorScope& operators = {}) const;

 private:
  void add_uses(Node* user);
  void remove_uses(Node* user);

  std::list<std::unique_ptr<Node>> nodes_;
  std::unordered_map<std::string, Node*> by_name_;
};

// True for "namespace::name" or "namespace::name.overload" with identifier-like parts.
bool is_operator_name(std::string_view target);
// The int arithmetic that a graph traced with dynamic shapes computes on its SymInts, as FX records
// it: Python's operator functions, written "operator.mul".
enum class SymIntOp { add, sub, mul, floordiv, mod, neg };
// The operation a call_function target names; nullopt for any other target.
std::optional<SymIntOp> symint_op(std::string_view target);
// Its target: "operator.mul".
std::string_view symint_target(SymIntOp op);

}  // namespace minifyd
