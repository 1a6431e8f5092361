// The logging facade's only implementation: spdlog to stderr, so stdout stays free for results.
#include "common/log.h"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

namespace minifyd::log {
namespace {

spdlog::logger& logger() {
  static std::shared_ptr<spdlog::logger> instance = [] {
    auto created = spdlog::stderr_logger_mt("minifyd");
    created->set_pattern("%Y-%m-%d %H:%M:%S.%e %^%l%$ %v");
    created->set_level(spdlog::level::info);
    return created;
  }();
  return *instance;
}

constexpr spdlog::level::level_enum spdlog_levels[] = {spdlog::level::debug, spdlog::level::info,
                                                       spdlog::level::warn, spdlog::level::err,
                                                       spdlog::level::off};

}  // namespace

void set_level(Level level) { logger().set_level(spdlog_levels[static_cast<int>(level)]); }

Level level() {
  for (int i = 0; i < 5; ++i)
    if (logger().level() == spdlog_levels[i]) return static_cast<Level>(i);
  return Level::info;
}

bool parse_level(const std::string& name, Level& out) {
  static const std::pair<const char*, Level> names[] = {{"debug", Level::debug},
                                                        {"info", Level::info},
                                                        {"warn", Level::warn},
                                                        {"error", Level::error},
                                                        {"off", Level::off}};
  for (const auto& [text, level] : names) {
    if (name == text) {
      out = level;
      return true;
    }
  }
  return false;
}

void debug(const std::string& message) { logger().debug(message); }
void info(const std::string& message) { logger().info(message); }
void warn(const std::string& message) { logger().warn(message); }
void error(const std::string& message) { logger().error(message); }

}  // namespace minifyd::log
