// A message's JSON encoding and its decoding from one list of its fields, so that the two cannot
// disagree. A list is a generic callable, fields(message, field), calling field(key, member) for
// each member in turn; it serves const messages (encoding) and mutable ones (decoding) alike:
//
//   constexpr auto totals_fields = [](auto& totals, auto&& field) {
//     field("queries", totals.queries);
//     field("wall_seconds", totals.wall_seconds);
//   };
//
// Members may be strings, ints, bools, doubles (non-finite ones as graph.json writes them),
// milliseconds (their count), raw
// JSON (nlohmann::json: checked by whoever interprets it), other messages (with encode(const T&)
// and decode(const JsonView&, T&) beside them), vectors of those, maps from strings to those (as
// JSON objects), and std::optional of any of these (absent or null when unset). A member with a default, field(key, member, fallback), is
// absent from the JSON when it equals fallback and reads as fallback when absent. Decoding ignores
// keys it does not know and names the path of the first bad or missing field.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/expected.h"
#include "common/json_view.h"

namespace minifyd::protocol {
namespace json_fields {

template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};
template <class T>
struct is_vector : std::false_type {};
template <class T>
struct is_vector<std::vector<T>> : std::true_type {};
template <class T>
struct is_string_map : std::false_type {};
template <class T>
struct is_string_map<std::map<std::string, T>> : std::true_type {};

// Scalars JsonView reads itself; anything else is a message with encode/decode of its own.
template <class T>
constexpr bool is_scalar = std::is_same_v<T, std::string> || std::is_same_v<T, std::int64_t> ||
                           std::is_same_v<T, std::uint64_t> || std::is_same_v<T, bool> ||
                           std::is_same_v<T, double> || std::is_same_v<T, nlohmann::json>;

template <class T>
nlohmann::json to_json(const T& value) {
  if constexpr (std::is_same_v<T, double>) {
    return encode_float(value);  // NaN and infinities too, which JSON numbers cannot hold
  } else if constexpr (std::is_same_v<T, std::chrono::milliseconds>) {
    return value.count();
  } else if constexpr (is_scalar<T>) {
    return value;
  } else if constexpr (is_vector<T>::value) {
    nlohmann::json array = nlohmann::json::array();
    for (const auto& item : value) array.push_back(to_json(item));
    return array;
  } else if constexpr (is_string_map<T>::value) {
    nlohmann::json object = nlohmann::json::object();
    for (const auto& [key, item] : value) object[key] = to_json(item);
    return object;
  } else {
    return encode(value);
  }
}

template <class T>
Expected<void> from_json(const JsonView& view, T& out) {
  if constexpr (std::is_same_v<T, nlohmann::json>) {
    out = view.raw();
    return {};
  } else if constexpr (std::is_same_v<T, std::string>) {
    auto value = view.as_string();
    if (!value) return value.error();
    out = std::move(*value);
    return {};
  } else if constexpr (std::is_same_v<T, std::int64_t>) {
    auto value = view.as_int();
    if (!value) return value.error();
    out = *value;
    return {};
  } else if constexpr (std::is_same_v<T, std::uint64_t>) {
    auto value = view.as_count();
    if (!value) return value.error();
    out = *value;
    return {};
  } else if constexpr (std::is_same_v<T, bool>) {
    auto value = view.as_bool();
    if (!value) return value.error();
    out = *value;
    return {};
  } else if constexpr (std::is_same_v<T, double>) {
    auto value = view.as_float();
    if (!value) return value.error();
    out = *value;
    return {};
  } else if constexpr (std::is_same_v<T, std::chrono::milliseconds>) {
    auto value = view.as_int();
    if (!value) return value.error();
    out = std::chrono::milliseconds(*value);
    return {};
  } else if constexpr (is_vector<T>::value) {
    auto count = view.array_size();
    if (!count) return count.error();
    out.clear();
    for (std::size_t i = 0; i < *count; ++i) {
      typename T::value_type item{};
      if (auto read = from_json(view.item(i), item); !read) return read.error();
      out.push_back(std::move(item));
    }
    return {};
  } else if constexpr (is_string_map<T>::value) {
    auto object = view.as_object();
    if (!object) return object.error();
    out.clear();
    for (const auto& [key, unused] : **object) {
      auto member = view.field(key);
      if (!member) return member.error();
      if (auto read = from_json(*member, out[key]); !read) return read.error();
    }
    return {};
  } else {
    return decode(view, out);
  }
}

class Writer {
 public:
  explicit Writer(nlohmann::json& out) : out_(out) {}
  template <class T>
  void operator()(const char* key, const T& member) {
    if constexpr (is_optional<T>::value) {
      if (member) out_[key] = to_json(*member);
    } else {
      out_[key] = to_json(member);
    }
  }
  template <class T>
  void operator()(const char* key, const T& member, const T& fallback) {
    if (!(member == fallback)) out_[key] = to_json(member);
  }

 private:
  nlohmann::json& out_;
};

class Reader {
 public:
  explicit Reader(const JsonView& view) : view_(view) {}
  template <class T>
  void operator()(const char* key, T& member) {
    if (!status_) return;
    if constexpr (is_optional<T>::value) {
      auto found = view_.optional_field(key);
      if (!found) {
        status_ = found.error();
      } else if (!*found) {
        member.reset();
      } else {
        typename T::value_type value{};
        status_ = from_json(**found, value);
        if (status_) member = std::move(value);
      }
    } else {
      auto found = view_.field(key);
      status_ = found ? from_json(*found, member) : Expected<void>(found.error());
    }
  }
  template <class T>
  void operator()(const char* key, T& member, const T& fallback) {
    if (!status_) return;
    auto found = view_.optional_field(key);
    if (!found) status_ = found.error();
    else if (!*found) member = fallback;
    else status_ = from_json(**found, member);
  }
  const Expected<void>& status() const { return status_; }

 private:
  const JsonView& view_;
  Expected<void> status_;
};

}  // namespace json_fields

// The members `fields` lists, as one JSON object (added to `out` when given one).
template <class T, class Fields>
nlohmann::json encode_fields(const T& message, Fields fields, nlohmann::json out = nlohmann::json::object()) {
  fields(message, json_fields::Writer(out));
  return out;
}

// Reads the members `fields` lists from the object `view`. Errors: `view` is no object; a required
// member is missing; a member has the wrong type (each naming the member's path).
template <class T, class Fields>
Expected<void> decode_fields(const JsonView& view, T& message, Fields fields) {
  if (auto object = view.as_object(); !object) return object.error();
  json_fields::Reader reader(view);
  fields(message, reader);
  return reader.status();
}

// What a saved file (a checkpoint, a job's spec or result) says it is: `format` and `version` beside
// its fields. Versions from `oldest` to `version` are read; 0 stands for the files written before
// they said, which have neither key.
struct DocumentFormat {
  const char* format;
  std::int64_t version;
  std::int64_t oldest = version;
};

// The members `fields` lists, with `format`'s name and version.
template <class T, class Fields>
nlohmann::json encode_document(const T& message, Fields fields, const DocumentFormat& format) {
  return encode_fields(message, fields, nlohmann::json{{"format", format.format}, {"version", format.version}});
}

// The version `view` says it is, when `format` reads it; an error naming what it is otherwise.
Expected<std::int64_t> document_version(const JsonView& view, const DocumentFormat& format);

// Reads a document `encode_document` wrote, or an older one `format` still reads: its version.
template <class T, class Fields>
Expected<std::int64_t> decode_document(const JsonView& view, T& message, Fields fields, const DocumentFormat& format) {
  auto version = document_version(view, format);
  if (!version) return version.error();
  if (auto decoded = decode_fields(view, message, fields); !decoded) return decoded.error();
  return version;
}

// Reads the member `key` of the object `view` into `out`: set when present, reset when absent or null
// (a message, a scalar or a vector, as a field list reads it).
template <class T>
Expected<void> decode_optional_member(const JsonView& view, const char* key, std::optional<T>& out) {
  json_fields::Reader reader(view);
  reader(key, out);
  return reader.status();
}

// Decodes a whole message: T{} filled by decode(view, T&).
template <class T>
Expected<T> decode_message(const JsonView& view) {
  T message{};
  if (auto decoded = decode(view, message); !decoded) return decoded.error();
  return message;
}
template <class T>
Expected<T> decode_message(const nlohmann::json& json) {
  return decode_message<T>(JsonView(json));
}

}  // namespace minifyd::protocol
