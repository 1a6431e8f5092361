// The one decoding helper for JSON from outside the process (files, pipes, sockets): typed access
// whose errors name the path of the offending field, e.g. "args[2].tuple[0]: expected an int".
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/expected.h"

namespace minifyd {

// A borrowed JSON value plus the path that led to it. The json must outlive the view.
class JsonView {
 public:
  explicit JsonView(const nlohmann::json& value, std::string path = {})
      : value_(&value), path_(std::move(path)) {}

  const nlohmann::json& raw() const { return *value_; }
  const std::string& path() const { return path_; }

  // A required member of an object.
  Expected<JsonView> field(std::string_view key) const;
  // A member that may be absent (absent and null are the same); an error if this is no object.
  Expected<std::optional<JsonView>> optional_field(std::string_view key) const;
  // Element i of an array the caller has checked with array_size().
  JsonView item(std::size_t index) const;

  Expected<std::size_t> array_size() const;
  Expected<std::string> as_string() const;
  Expected<std::int64_t> as_int() const;
  // An int that is not negative: a count, a size, a limit.
  Expected<std::uint64_t> as_count() const;
  Expected<bool> as_bool() const;
  // A JSON number, integer or not.
  Expected<double> as_number() const;
  // A float as graph.json writes it: a number, or {"float": "inf" | "-inf" | "nan"}.
  Expected<double> as_float() const;
  // Checks that this is an object and returns it.
  Expected<const nlohmann::json::object_t*> as_object() const;

  // Reads a required member into out (strings, ints, bools and numbers).
  Expected<void> read(std::string_view key, std::string& out) const;
  Expected<void> read(std::string_view key, std::int64_t& out) const;
  Expected<void> read(std::string_view key, std::uint64_t& out) const;  // as_count()
  Expected<void> read(std::string_view key, bool& out) const;
  Expected<void> read(std::string_view key, double& out) const;
  // Reads a member when present; leaves out unchanged when absent or null.
  template <class T>
  Expected<void> read_optional(std::string_view key, T& out) const {
    auto member = optional_field(key);
    if (!member) return member.error();
    if (!member->has_value()) return {};
    return read(key, out);
  }
  // Reads a member into an optional: set when present, left unset when absent or null.
  template <class T>
  Expected<void> read_optional(std::string_view key, std::optional<T>& out) const {
    auto member = optional_field(key);
    if (!member) return member.error();
    if (!member->has_value()) return {};
    T value{};
    if (auto read_value = read(key, value); !read_value) return read_value.error();
    out = std::move(value);
    return {};
  }
  // Calls decode(item) for each element of the required array member `key`, in order; the first
  // error ends it. decode returns Expected<void>.
  template <class Decode>
  Expected<void> for_each_item(std::string_view key, Decode decode) const {
    auto array = field(key);
    if (!array) return array.error();
    auto count = array->array_size();
    if (!count) return count.error();
    for (std::size_t i = 0; i < *count; ++i)
      if (auto decoded = decode(array->item(i)); !decoded) return decoded.error();
    return {};
  }

  // Appends decode(item) (an Expected of out's element type) for each element of the required array
  // member `key`, in order; the first error ends it.
  template <class Decode, class T>
  Expected<void> append_items(std::string_view key, Decode decode, std::vector<T>& out) const {
    return for_each_item(key, [&](const JsonView& item) -> Expected<void> {
      auto decoded = decode(item);
      if (!decoded) return decoded.error();
      out.push_back(std::move(*decoded));
      return {};
    });
  }

  // An invalid_input error located at this view: "PATH: message" (or "message" at the root).
  Error error(const std::string& message) const;

 private:
  std::string child_path(std::string_view key) const;

  const nlohmann::json* value_;
  std::string path_;
};

// The JSON type of a value in words ("an int", "a string", ...), for error messages.
const char* describe_json_type(const nlohmann::json& value);

// The inverse of as_float(): finite floats as numbers, others as {"float": ...}.
nlohmann::json encode_float(double number);

// Parses text, turning a syntax error into an invalid_input error with its byte offset.
Expected<nlohmann::json> parse_json(std::string_view text);
// Reads and parses a JSON file; errors name the file.
Expected<nlohmann::json> read_json_file(const std::filesystem::path& path);

}  // namespace minifyd
