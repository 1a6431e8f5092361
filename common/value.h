// Argument values of graph nodes: the Python values an FX graph of aten operators can carry.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/dtype.h"

namespace minifyd {

class Node;
struct Value;

struct NoneValue {};
// A reference to another node's result. Only a Graph may create nodes, so only it resolves these.
struct NodeRef {
  Node* node = nullptr;
};
struct ListValue {
  std::vector<Value> items;
  bool is_tuple = false;  // Python tuple rather than list: kept so a repro rebuilds the same call
};
struct DTypeValue {
  DType dtype;
};
struct DeviceValue {
  std::string name;  // "cpu", "cuda", "cuda:1", "meta"
};
struct LayoutValue {
  std::string name;  // one of layout_names()
};
struct MemoryFormatValue {
  std::string name;  // one of memory_format_names()
};

using ValueData = std::variant<NoneValue, bool, std::int64_t, double, std::string, NodeRef, ListValue,
                               DTypeValue, DeviceValue, LayoutValue, MemoryFormatValue>;

struct Value {
  ValueData data;

  Value() : data(NoneValue{}) {}
  template <class T, class = std::enable_if_t<std::is_constructible_v<ValueData, T&&> &&
                                              !std::is_same_v<std::decay_t<T>, Value>>>
  Value(T&& alternative) : data(std::forward<T>(alternative)) {}
  // Without these, a string literal would convert to bool and an int to double.
  Value(const char* text) : data(std::string(text)) {}
  Value(int number) : data(static_cast<std::int64_t>(number)) {}

  template <class T>
  bool is() const { return std::holds_alternative<T>(data); }
  template <class T>
  const T& as() const { return std::get<T>(data); }
  template <class T>
  T& as() { return std::get<T>(data); }
};

// Calls visit on every node referenced anywhere inside value, in order (duplicates included).
void for_each_node_ref(const Value& value, const std::function<void(Node*)>& visit);
// Returns a copy of value with every node reference replaced by map(node).
Value map_node_refs(const Value& value, const std::function<Node*(Node*)>& map);

bool is_valid_device(std::string_view name);
bool is_valid_layout(std::string_view name);
bool is_valid_memory_format(std::string_view name);
std::string layout_names();
std::string memory_format_names();

}  // namespace minifyd
