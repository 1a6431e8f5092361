// Logging facade. It never includes spdlog, so translation units that include LibTorch (whose 2.x
// headers bundle their own fmt) can log. Levels: error = the user must see it; info = one line per
// job, strategy and accepted candidate; debug = wire traffic.
#pragma once

#include <string>

namespace minifyd::log {

enum class Level { debug, info, warn, error, off };

// Sets the level of the process-wide logger (thread-safe). Logs go to stderr.
void set_level(Level level);
Level level();
// Parses "debug" / "info" / "warn" / "error" / "off"; false when the name is unknown.
bool parse_level(const std::string& name, Level& out);

void debug(const std::string& message);
void info(const std::string& message);
void warn(const std::string& message);
void error(const std::string& message);

}  // namespace minifyd::log
