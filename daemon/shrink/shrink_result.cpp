// The shrinking's record: its encoding and report.md's section.
#include "daemon/shrink/shrink_result.h"

#include <iomanip>
#include <sstream>

#include "protocol/json_fields.h"

namespace minifyd::shrink {
namespace {

using protocol::decode_fields;
using protocol::encode_fields;

constexpr auto size_fields = [](auto& size, auto&& field) {
  field("stored_bytes", size.stored_bytes);
  field("largest", size.largest, std::string());
  field("largest_bytes", size.largest_bytes);
};

constexpr auto storage_fields = [](auto& storage, auto&& field) {
  field("tensor", storage.tensor);
  field("nbytes", storage.nbytes);
  field("replaced_by", storage.replaced_by, std::string());
  field("refused", storage.refused);
};

constexpr auto shrink_fields = [](auto& shrink, auto&& field) {
  field("before", shrink.before);
  field("after", shrink.after);
  field("storages", shrink.storages);
  field("requires_grad_dropped", shrink.requires_grad_dropped);
  field("requires_grad_kept", shrink.requires_grad_kept);
  field("shapes", shrink.shapes, std::string());
  field("queries", shrink.queries);
  field("wall_seconds", shrink.wall_seconds);
  field("error", shrink.error, std::string());
};

std::string size_line(const char* what, const DataSize& size) {
  std::string line = "| " + std::string(what) + " | " + bytes_text(size.stored_bytes) + " | ";
  line += size.largest.empty() ? "none stored" : "`" + size.largest + "`, " + bytes_text(size.largest_bytes);
  return line + " |\n";
}

std::string joined(const std::vector<std::string>& items, const std::string& quote) {
  std::string text;
  for (const std::string& item : items) text += (text.empty() ? "" : ", ") + quote + item + quote;
  return text;
}

}  // namespace

std::vector<StorageViewer> storage_viewers(const GraphDocument& document) {
  std::vector<StorageViewer> viewers(document.storages.size());
  auto view = [&viewers](const TensorMeta& tensor, const std::string& name) {
    if (tensor.storage < viewers.size() && viewers[tensor.storage].tensor == nullptr)
      viewers[tensor.storage] = StorageViewer{name, &tensor};
  };
  std::vector<Node*> placeholders = document.graph.placeholders();
  for (std::size_t i = 0; i < document.inputs.size() && i < placeholders.size(); ++i)
    if (const TensorMeta* tensor = input_tensor(document.inputs[i])) view(*tensor, "input " + placeholders[i]->name());
  for (const auto& [name, tensor] : document.constants) view(tensor, "constant " + name);
  return viewers;
}

DataSize data_size(const GraphDocument& document) {
  DataSize size;
  std::vector<StorageViewer> viewers = storage_viewers(document);
  for (std::size_t i = 0; i < document.storages.size(); ++i) {
    const StorageRef& storage = document.storages[i];
    if (!storage.stored()) continue;
    size.stored_bytes += storage.nbytes;
    if (storage.nbytes > size.largest_bytes || size.largest.empty()) {
      size.largest = viewers[i].name;
      size.largest_bytes = storage.nbytes;
    }
  }
  return size;
}

nlohmann::json encode(const DataSize& size) { return encode_fields(size, size_fields); }
Expected<void> decode(const JsonView& view, DataSize& size) { return decode_fields(view, size, size_fields); }
nlohmann::json encode(const StorageShrink& storage) { return encode_fields(storage, storage_fields); }
Expected<void> decode(const JsonView& view, StorageShrink& storage) {
  return decode_fields(view, storage, storage_fields);
}
nlohmann::json encode(const InputShrink& shrink) { return encode_fields(shrink, shrink_fields); }
Expected<void> decode(const JsonView& view, InputShrink& shrink) { return decode_fields(view, shrink, shrink_fields); }

std::string bytes_text(std::uint64_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + " B";
  std::ostringstream text;
  double value = static_cast<double>(bytes) / 1024;
  const char* unit = "KiB";
  if (value >= 1024) value /= 1024, unit = "MiB";
  if (value >= 1024) value /= 1024, unit = "GiB";
  text << std::fixed << std::setprecision(1) << value << " " << unit;
  return text.str();
}

std::string render_markdown(const InputShrink& shrink, const DataSize* original) {
  std::ostringstream out;
  out << "## Smallest inputs\n\n";
  if (!shrink.error.empty()) out << "The shrinking did not finish: " << shrink.error << "\n\n";
  out << "| data | stored | largest stored tensor |\n|---|---|---|\n";
  if (original) out << size_line("original graph", *original);
  out << size_line("minimized graph", shrink.before) << size_line("after shrinking", shrink.after);
  if (!shrink.storages.empty()) {
    out << "\n| tensor | bytes | now |\n|---|---|---|\n";
    for (const StorageShrink& storage : shrink.storages) {
      out << "| `" << storage.tensor << "` | " << bytes_text(storage.nbytes) << " | ";
      if (!storage.replaced_by.empty()) out << storage.replaced_by;
      else out << "stored (the failure needs its values: gone or changed under " << joined(storage.refused, "") << ")";
      out << " |\n";
    }
  }
  if (!shrink.requires_grad_dropped.empty())
    out << "\n`requires_grad` dropped: " << joined(shrink.requires_grad_dropped, "`") << ".\n";
  if (!shrink.requires_grad_kept.empty())
    out << "\n`requires_grad` kept (the failure needs it): " << joined(shrink.requires_grad_kept, "`") << ".\n";
  if (!shrink.shapes.empty()) out << "\nShapes: " << shrink.shapes << "\n";
  out << "\n" << shrink.queries << " candidates in " << std::fixed << std::setprecision(1) << shrink.wall_seconds
      << " s; each change was kept only where the graph still failed the same way.\n";
  return out.str();
}

}  // namespace minifyd::shrink
