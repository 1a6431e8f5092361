// repro_script: the template with the graph loader and the settings filled in, and settings that
// survive any path or regex (quotes, backslashes, newlines, non-ASCII) as a Python string literal.
#include <catch2/catch.hpp>

#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "daemon/run/repro_script.h"

using namespace minifyd;
using nlohmann::json;

namespace {

constexpr std::string_view settings_prefix = "SETTINGS_JSON = ";

std::vector<std::string> lines_starting_with(const std::string& text, std::string_view prefix) {
  std::vector<std::string> found;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind(prefix, 0) == 0) found.push_back(line);
  return found;
}

// The literal after SETTINGS_JSON = , checked to mean the same in Python as in JSON, decoded.
json embedded_settings(const std::string& script) {
  std::vector<std::string> lines = lines_starting_with(script, settings_prefix);
  REQUIRE(lines.size() == 1);
  std::string literal = lines[0].substr(settings_prefix.size());
  REQUIRE(literal.size() >= 2);
  CHECK(literal.front() == '"');
  CHECK(literal.back() == '"');
  for (std::size_t i = 0; i < literal.size(); ++i) {
    INFO("character " << i << " of " << literal);
    CHECK((literal[i] >= 0x20 && literal[i] < 0x7f));
    if (literal[i] == '\\') {
      REQUIRE(i + 1 < literal.size());
      CHECK((literal[i + 1] == '"' || literal[i + 1] == '\\'));
      ++i;
    }
  }
  return json::parse(json::parse(literal).get<std::string>());
}

}  // namespace

TEST_CASE("the script is the template with the graph loader in place of its import", "[repro_script]") {
  std::string script = run::repro_script(run::ReproSpec{});
  CHECK(script.rfind("#!/usr/bin/env python3\n", 0) == 0);
  CHECK(script.find("\ndef load_graph(graph_dir):\n") != std::string::npos);
  CHECK(script.find("\ndef main():\n") != std::string::npos);
  CHECK(script.find("\ndef load_graph(") < script.find("\ndef main():"));
  CHECK(lines_starting_with(script, "from minifyd.graph_format import").empty());
  CHECK(script.find("# ---- end of the loader:") == std::string::npos);
  CHECK(script.size() > std::string("    sys.exit(main())\n").size());
  CHECK(script.substr(script.size() - 21) == "    sys.exit(main())\n");
}

TEST_CASE("every setting is embedded, escaped for Python", "[repro_script]") {
  run::ReproSpec spec;
  spec.graph_dir = "/tmp/we\"ird 'dir'\\with\nnewline/caf\xc3\xa9";
  spec.backend = "plugin:/opt/back\\end\".so";
  spec.backend_options = {{"op", "aten::relu"}, {"fault", "throw"}, {"quote\"", "back\\slash"}};
  spec.accuracy = protocol::AccuracyMode::strict_accuracy;
  spec.nan_check = true;
  spec.check_str = R"(c10::Error.*\bmat1\b "x")";
  spec.timeout_seconds = 2.5;
  spec.minify_executable = "/usr/local/bin/min'ify";

  json settings = embedded_settings(run::repro_script(spec));
  CHECK(settings["graph_dir"] == spec.graph_dir);
  CHECK(settings["backend"] == spec.backend);
  CHECK(settings["backend_options"] == json{{"op", "aten::relu"}, {"fault", "throw"}, {"quote\"", "back\\slash"}});
  CHECK(settings["accuracy"] == "strict-accuracy");
  CHECK(settings["nan_check"] == true);
  CHECK(settings["check_str"] == *spec.check_str);
  CHECK(settings["timeout_seconds"] == 2.5);
  CHECK(settings["minify"] == spec.minify_executable);
}

TEST_CASE("defaults: no check string, accuracy off, no options", "[repro_script]") {
  run::ReproSpec spec;
  spec.graph_dir = "/graphs/min";
  spec.backend = "torchscript";
  json settings = embedded_settings(run::repro_script(spec));
  CHECK(settings["check_str"].is_null());
  CHECK(settings["accuracy"] == "off");
  CHECK(settings["nan_check"] == false);
  CHECK(settings["backend_options"] == json::object());
  CHECK(settings["timeout_seconds"] == 60.0);
}
