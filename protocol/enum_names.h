// An enum coded by name, from one table of its values' names, so that the name a value prints as, the
// value a name parses to, and the error an unknown name gets cannot disagree:
//
//   constexpr EnumName<MatchMode> match_names[] = {{MatchMode::same, "same"}, {MatchMode::any, "any"}};
//   name_of(match_names, MatchMode::any)   -> "any"
//   parse_name(match_names, "some")        -> nullopt
//   decode_name(view, mode, match_names, "match mode")
//                                          -> "unknown match mode 'some' (same, any)"
#pragma once

#include <optional>
#include <string>
#include <utility>

#include "common/expected.h"
#include "common/json_view.h"

namespace minifyd::protocol {

template <class Enum>
using EnumName = std::pair<Enum, const char*>;

template <class Enum, std::size_t N>
const char* name_of(const EnumName<Enum> (&names)[N], Enum value) {
  for (const auto& [candidate, name] : names)
    if (candidate == value) return name;
  return "unknown";
}

template <class Enum, std::size_t N>
std::optional<Enum> parse_name(const EnumName<Enum> (&names)[N], const std::string& text) {
  for (const auto& [candidate, name] : names)
    if (text == name) return candidate;
  return std::nullopt;
}

// "unknown <what> '<text>' (<every name>)": the error for a name the table does not hold.
template <class Enum, std::size_t N>
std::string unknown_name(const EnumName<Enum> (&names)[N], const std::string& what, const std::string& text) {
  std::string choices;
  for (const auto& [value, name] : names) choices += (choices.empty() ? "" : ", ") + std::string(name);
  return "unknown " + what + " '" + text + "' (" + choices + ")";
}

// Reads the string `view` as one of the table's names. Errors: no string; an unknown name.
template <class Enum, std::size_t N>
Expected<void> decode_name(const JsonView& view, Enum& out, const EnumName<Enum> (&names)[N], const std::string& what) {
  auto text = view.as_string();
  if (!text) return text.error();
  auto parsed = parse_name(names, *text);
  if (!parsed) return view.error(unknown_name(names, what, *text));
  out = *parsed;
  return {};
}

}  // namespace minifyd::protocol
