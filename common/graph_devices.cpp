// Which devices a graph document runs on.
#include "common/graph_devices.h"

#include <algorithm>
#include <string_view>

namespace minifyd {
namespace {

bool is_cuda(std::string_view device) { return device.rfind("cuda", 0) == 0; }

bool names_cuda(const Value& value) {
  if (const auto* device = std::get_if<DeviceValue>(&value.data)) return is_cuda(device->name);
  if (const auto* list = std::get_if<ListValue>(&value.data))
    return std::any_of(list->items.begin(), list->items.end(), names_cuda);
  return false;
}

}  // namespace

bool uses_cuda(const GraphDocument& document) {
  for (const StorageRef& storage : document.storages)
    if (is_cuda(storage.device)) return true;
  for (const Node* node : document.graph.nodes()) {
    if (std::any_of(node->args().begin(), node->args().end(), names_cuda)) return true;
    for (const auto& [name, value] : node->kwargs())
      if (names_cuda(value)) return true;
  }
  return false;
}

}  // namespace minifyd
