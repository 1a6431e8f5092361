// The graph rule, decoded once from the JSON compiled in (graph_targets_json.h).
#include "common/graph_targets.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "common/graph_targets_json.h"

namespace minifyd {
namespace {

// The identifier syntax this file checks by hand; the rule names it, and a rule naming another is a
// build defect (see decode_rule).
constexpr std::string_view identifier_pattern = "[A-Za-z_][A-Za-z0-9_]*";

struct TargetRule {
  std::set<std::string, std::less<>> keywords;
  std::size_t max_name_length = 0;
  std::string special, special_prefix, special_suffix;
  std::set<std::string, std::less<>> namespaces;
  std::set<std::string, std::less<>> operators;
  std::map<std::string, std::string, std::less<>> refused;
  std::string namespace_list;
};

// The rule ships with the program, so a rule that does not decode is a build defect: the build's
// own tests load it first.
TargetRule decode_rule() {
  auto json = nlohmann::json::parse(graph_targets_json);
  if (json.at("format") != "minifyd.graph-targets" || json.at("version") != 2)
    throw std::logic_error("graph_targets.json: not a version 2 minifyd.graph-targets document");
  TargetRule rule;
  const auto& names = json.at("names");
  if (names.at("identifier") != identifier_pattern)
    throw std::logic_error("graph_targets.json: names.identifier is not the syntax this build checks");
  // Python's special names (__class__, __init__): as a constant's name one would replace what the
  // module is, not add a tensor to it. The rule spells them PREFIX*SUFFIX.
  rule.special = names.at("special").get<std::string>();
  std::size_t star = rule.special.find('*');
  if (star == std::string::npos) throw std::logic_error("graph_targets.json: names.special has no '*'");
  rule.special_prefix = rule.special.substr(0, star);
  rule.special_suffix = rule.special.substr(star + 1);
  for (const auto& keyword : names.at("keywords")) rule.keywords.insert(keyword.get<std::string>());
  rule.max_name_length = names.at("max_length").get<std::size_t>();
  for (const auto& name : json.at("namespaces")) {
    rule.namespace_list += (rule.namespace_list.empty() ? "" : ", ") + name.get<std::string>();
    rule.namespaces.insert(name.get<std::string>());
  }
  for (const auto& name : json.at("operators")) rule.operators.insert(name.get<std::string>());
  for (const auto& [name, reason] : json.at("refused").items()) rule.refused.emplace(name, reason.get<std::string>());
  return rule;
}

const TargetRule& rule() {
  static const TargetRule decoded = decode_rule();
  return decoded;
}

}  // namespace

bool is_identifier(std::string_view text) {
  auto ascii_alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (text.empty() || !ascii_alpha(text.front())) return false;
  return std::all_of(text.begin(), text.end(), [&](char c) { return ascii_alpha(c) || (c >= '0' && c <= '9'); });
}

std::optional<std::string> name_refusal(std::string_view name) {
  if (name.size() > rule().max_name_length)
    return quoted_for_message(name) + " is longer than " + std::to_string(rule().max_name_length) + " characters";
  if (!is_identifier(name))
    return quoted_for_message(name) + " is not an identifier (" + std::string(identifier_pattern) + ")";
  if (rule().keywords.count(name)) return quoted_for_message(name) + " is a Python keyword";
  const TargetRule& names = rule();
  if (name.size() >= names.special_prefix.size() + names.special_suffix.size() &&
      name.substr(0, names.special_prefix.size()) == names.special_prefix &&
      name.substr(name.size() - names.special_suffix.size()) == names.special_suffix)
    return quoted_for_message(name) + " is a special name of Python's (" + names.special + ")";
  return std::nullopt;
}

std::optional<std::string> attribute_path_refusal(std::string_view path) {
  if (path.size() > rule().max_name_length)
    return quoted_for_message(path) + " is longer than " + std::to_string(rule().max_name_length) + " characters";
  for (std::size_t start = 0;;) {
    std::size_t dot = path.find('.', start);
    if (auto refused = name_refusal(path.substr(start, dot == std::string_view::npos ? dot : dot - start)))
      return quoted_for_message(path) + ": a segment " + *refused + " (a constant's name is a dotted path of identifiers)";
    if (dot == std::string_view::npos) return std::nullopt;
    start = dot + 1;
  }
}

std::string quoted_for_message(std::string_view text) {
  constexpr std::size_t shown = 80;
  std::string cut(text.substr(0, shown));
  std::string quoted = nlohmann::json(cut).dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
  return text.size() > shown ? quoted + "... (" + std::to_string(text.size()) + " bytes)" : quoted;
}

std::string node_label(std::string_view name) {
  return attribute_path_refusal(name) ? quoted_for_message(name) : "'" + std::string(name) + "'";
}

std::optional<std::string> operator_refusal(std::string_view target, const OperatorScope& scope) {
  std::string_view op = target.substr(0, target.find('.', target.find("::")));
  std::string_view name_space = target.substr(0, target.find("::"));
  if (auto refused = rule().refused.find(op); refused != rule().refused.end())
    return "target '" + std::string(target) + "' is refused: " + refused->second + " (docs/security.md)";
  if (rule().namespaces.count(name_space) || rule().operators.count(op) || scope.namespaces.count(name_space))
    return std::nullopt;
  return "target '" + std::string(target) + "' is refused: a graph calls operators of the namespaces " +
         rule().namespace_list + " only, not of '" + std::string(name_space) +
         "', unless its job names a library of them (--op-library " + std::string(name_space) +
         "=PATH.so; docs/security.md)";
}

std::optional<std::string> library_namespace_refusal(std::string_view name_space) {
  if (auto refused = name_refusal(name_space)) return "the namespace " + *refused;
  if (rule().namespaces.count(name_space))
    return "the namespace '" + std::string(name_space) + "' is PyTorch's own (" + rule().namespace_list +
           "): an operator library adds a namespace of its own";
  return std::nullopt;
}

}  // namespace minifyd
