// Typed, path-reporting access to untrusted JSON.
#include "common/json_view.h"

#include <cmath>
#include <limits>

#include "common/file_util.h"

namespace minifyd {

const char* describe_json_type(const nlohmann::json& value) {
  switch (value.type()) {
    case nlohmann::json::value_t::null: return "null";
    case nlohmann::json::value_t::boolean: return "a bool";
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned: return "an int";
    case nlohmann::json::value_t::number_float: return "a float";
    case nlohmann::json::value_t::string: return "a string";
    case nlohmann::json::value_t::array: return "an array";
    case nlohmann::json::value_t::object: return "an object";
    default: return "an unsupported JSON value";
  }
}

Error JsonView::error(const std::string& message) const {
  return make_error(ErrorKind::invalid_input, path_.empty() ? message : path_ + ": " + message);
}

std::string JsonView::child_path(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

Expected<const nlohmann::json::object_t*> JsonView::as_object() const {
  if (!value_->is_object())
    return error(std::string("expected an object, got ") + describe_json_type(*value_));
  return value_->get_ptr<const nlohmann::json::object_t*>();
}

Expected<JsonView> JsonView::field(std::string_view key) const {
  auto found = optional_field(key);
  if (!found) return found.error();
  if (!found->has_value()) return error("missing field '" + std::string(key) + "'");
  return **found;
}

Expected<std::optional<JsonView>> JsonView::optional_field(std::string_view key) const {
  auto object = as_object();
  if (!object) return object.error();
  auto it = (*object)->find(std::string(key));
  if (it == (*object)->end() || it->second.is_null()) return std::optional<JsonView>();
  return std::optional<JsonView>(JsonView(it->second, child_path(key)));
}

JsonView JsonView::item(std::size_t index) const {
  return JsonView((*value_)[index], path_ + "[" + std::to_string(index) + "]");
}

Expected<std::size_t> JsonView::array_size() const {
  if (!value_->is_array())
    return error(std::string("expected an array, got ") + describe_json_type(*value_));
  return value_->size();
}

Expected<std::string> JsonView::as_string() const {
  if (!value_->is_string())
    return error(std::string("expected a string, got ") + describe_json_type(*value_));
  return value_->get<std::string>();
}

Expected<std::int64_t> JsonView::as_int() const {
  if (value_->is_number_unsigned()) {
    auto number = value_->get<std::uint64_t>();
    if (number > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      return error("integer " + std::to_string(number) + " does not fit in 64 bits");
    return static_cast<std::int64_t>(number);
  }
  if (!value_->is_number_integer())
    return error(std::string("expected an int, got ") + describe_json_type(*value_));
  return value_->get<std::int64_t>();
}

Expected<bool> JsonView::as_bool() const {
  if (!value_->is_boolean())
    return error(std::string("expected a bool, got ") + describe_json_type(*value_));
  return value_->get<bool>();
}

Expected<double> JsonView::as_number() const {
  if (!value_->is_number())
    return error(std::string("expected a number, got ") + describe_json_type(*value_));
  return value_->get<double>();
}

namespace {

template <class T, class Convert>
Expected<void> read_member(const JsonView& view, std::string_view key, T& out, Convert convert) {
  auto member = view.field(key);
  if (!member) return member.error();
  auto value = convert(*member);
  if (!value) return value.error();
  out = *value;
  return {};
}

}  // namespace

Expected<void> JsonView::read(std::string_view key, std::string& out) const {
  return read_member(*this, key, out, [](const JsonView& v) { return v.as_string(); });
}
Expected<void> JsonView::read(std::string_view key, std::int64_t& out) const {
  return read_member(*this, key, out, [](const JsonView& v) { return v.as_int(); });
}
Expected<void> JsonView::read(std::string_view key, std::uint64_t& out) const {
  return read_member(*this, key, out, [](const JsonView& v) { return v.as_count(); });
}
Expected<void> JsonView::read(std::string_view key, bool& out) const {
  return read_member(*this, key, out, [](const JsonView& v) { return v.as_bool(); });
}
Expected<void> JsonView::read(std::string_view key, double& out) const {
  return read_member(*this, key, out, [](const JsonView& v) { return v.as_number(); });
}

Expected<std::uint64_t> JsonView::as_count() const {
  if (value_->is_number_unsigned()) return value_->get<std::uint64_t>();
  auto number = as_int();
  if (!number) return number.error();
  return error("must not be negative");
}

Expected<double> JsonView::as_float() const {
  if (value_->is_number()) return value_->get<double>();
  if (!value_->is_object() || value_->size() != 1 || !value_->contains("float"))
    return error(std::string("expected a float, got ") + describe_json_type(*value_));
  auto inner = field("float");
  auto text = inner->as_string();
  if (!text) return text.error();
  if (*text == "inf") return std::numeric_limits<double>::infinity();
  if (*text == "-inf") return -std::numeric_limits<double>::infinity();
  if (*text == "nan") return std::numeric_limits<double>::quiet_NaN();
  return inner->error("'" + *text + "' is not inf, -inf or nan (finite floats are plain numbers)");
}

nlohmann::json encode_float(double number) {
  if (std::isnan(number)) return nlohmann::json{{"float", "nan"}};
  if (std::isinf(number)) return nlohmann::json{{"float", number > 0 ? "inf" : "-inf"}};
  return number;
}

Expected<nlohmann::json> parse_json(std::string_view text) {
  try {
    return nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::parse_error& e) {
    return make_error(ErrorKind::invalid_input,
                      "invalid JSON at byte " + std::to_string(e.byte) + ": " + e.what());
  }
}

// The largest JSON file read (a graph document of tens of thousands of nodes is tens of megabytes):
// a larger one, a sparse 8 GiB graph.json among them, is refused before it is read.
constexpr std::uint64_t max_json_file_bytes = 256ULL << 20;

Expected<nlohmann::json> read_json_file(const std::filesystem::path& path) {
  auto file = open_regular_file(path);
  if (!file) return file.error();
  if (static_cast<std::uint64_t>(file->info.st_size) > max_json_file_bytes)
    return make_error(ErrorKind::invalid_input, path.string() + ": " + std::to_string(file->info.st_size) +
                                                    " bytes, more than the " + std::to_string(max_json_file_bytes >> 20) +
                                                    " MiB a JSON document may hold");
  auto text = read_file(*file, path);
  if (!text) return text.error();
  auto json = parse_json(*text);
  if (!json) return json.error().with_context(path.string());
  return json;
}

}  // namespace minifyd
