// Filling in repro.py's template, which the build embeds already cut at the two places filled in.
#include "daemon/run/repro_script.h"

#include <nlohmann/json.hpp>

#include "daemon/run/repro_template_text.h"

namespace minifyd::run {
namespace {

// The settings as the template's SETTINGS_JSON line wants them: a Python string literal holding
// JSON. The JSON is dumped ASCII-only, so the literal it is dumped into again needs no escapes
// but \" and \\, which mean the same in Python; a path that is not UTF-8 gets U+FFFD instead of
// failing the run.
std::string settings_literal(const ReproSpec& spec) {
  nlohmann::json settings = {
      {"graph_dir", spec.graph_dir},
      {"backend", spec.backend},
      {"backend_options", spec.backend_options},
      {"accuracy", protocol::to_string(spec.accuracy)},
      {"nan_check", spec.nan_check},
      {"check_str", spec.check_str ? nlohmann::json(*spec.check_str) : nlohmann::json(nullptr)},
      {"timeout_seconds", spec.timeout_seconds},
      {"minify", spec.minify_executable},
  };
  constexpr bool ascii_only = true;
  constexpr auto replace_invalid = nlohmann::json::error_handler_t::replace;
  std::string json_text = settings.dump(-1, ' ', ascii_only, replace_invalid);
  return nlohmann::json(json_text).dump(-1, ' ', ascii_only, replace_invalid);
}

}  // namespace

std::string repro_script(const ReproSpec& spec) {
  std::string script(repro_template::before_loader);
  script += repro_template::loader;
  script += repro_template::before_settings;
  script += settings_literal(spec);
  script += repro_template::after_settings;
  return script;
}

}  // namespace minifyd::run
