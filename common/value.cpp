// Traversal of argument values and the vocabularies of devices, layouts and memory formats.
#include "common/value.h"

#include <cctype>

namespace minifyd {
namespace {

constexpr const char* layouts[] = {"strided",    "sparse_coo", "sparse_csr", "sparse_csc",
                                   "sparse_bsr", "sparse_bsc", "_mkldnn"};
constexpr const char* memory_formats[] = {"contiguous_format", "preserve_format", "channels_last",
                                          "channels_last_3d"};

template <std::size_t N>
bool contains(const char* const (&names)[N], std::string_view name) {
  for (const char* candidate : names)
    if (name == candidate) return true;
  return false;
}

template <std::size_t N>
std::string join(const char* const (&names)[N]) {
  std::string joined;
  for (const char* name : names) {
    if (!joined.empty()) joined += ' ';
    joined += name;
  }
  return joined;
}

}  // namespace

void for_each_node_ref(const Value& value, const std::function<void(Node*)>& visit) {
  if (value.is<NodeRef>()) {
    visit(value.as<NodeRef>().node);
  } else if (value.is<ListValue>()) {
    for (const Value& item : value.as<ListValue>().items) for_each_node_ref(item, visit);
  }
}

Value map_node_refs(const Value& value, const std::function<Node*(Node*)>& map) {
  if (value.is<NodeRef>()) return NodeRef{map(value.as<NodeRef>().node)};
  if (value.is<ListValue>()) {
    const ListValue& list = value.as<ListValue>();
    ListValue mapped{{}, list.is_tuple};
    mapped.items.reserve(list.items.size());
    for (const Value& item : list.items) mapped.items.push_back(map_node_refs(item, map));
    return mapped;
  }
  return value;
}

bool is_valid_device(std::string_view name) {
  std::string_view type = name.substr(0, name.find(':'));
  if (type != "cpu" && type != "cuda" && type != "meta") return false;
  if (type.size() == name.size()) return true;
  std::string_view index = name.substr(type.size() + 1);
  if (index.empty() || index.size() > 4) return false;
  for (char c : index)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

bool is_valid_layout(std::string_view name) { return contains(layouts, name); }
bool is_valid_memory_format(std::string_view name) { return contains(memory_formats, name); }
std::string layout_names() { return join(layouts); }
std::string memory_format_names() { return join(memory_formats); }

}  // namespace minifyd
