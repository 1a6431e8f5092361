// The graph-target rule, decoded once from the JSON compiled in (graph_targets_json.h).
#include "common/graph_targets.h"

#include <map>
#include <set>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "common/graph_targets_json.h"

namespace minifyd {
namespace {

struct TargetRule {
  std::set<std::string, std::less<>> namespaces;
  std::set<std::string, std::less<>> operators;
  std::map<std::string, std::string, std::less<>> refused;
  std::string namespace_list;
};

// The rule ships with the program, so a rule that does not decode is a build defect: the build's
// own tests load it first.
TargetRule decode_rule() {
  auto json = nlohmann::json::parse(graph_targets_json);
  if (json.at("format") != "minifyd.graph-targets" || json.at("version") != 1)
    throw std::logic_error("graph_targets.json: not a version 1 minifyd.graph-targets document");
  TargetRule rule;
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

std::optional<std::string> operator_refusal(std::string_view target) {
  std::string_view op = target.substr(0, target.find('.', target.find("::")));
  std::string_view name_space = target.substr(0, target.find("::"));
  if (auto refused = rule().refused.find(op); refused != rule().refused.end())
    return "target '" + std::string(target) + "' is refused: " + refused->second + " (docs/security.md)";
  if (rule().namespaces.count(name_space) || rule().operators.count(op)) return std::nullopt;
  return "target '" + std::string(target) + "' is refused: a graph calls operators of the namespaces " +
         rule().namespace_list + " only, not of '" + std::string(name_space) + "' (docs/security.md)";
}

}  // namespace minifyd
