// Numeric options' validator.
#include "daemon/options/number_option.h"

namespace minifyd::options {

CLI::Validator within(const NumberRange& range) {
  return CLI::Validator(
      [range](std::string& text) -> std::string {
        auto parsed = parse_number(text, range);
        return parsed ? std::string() : parsed.error().message;
      },
      describe(range));
}

}  // namespace minifyd::options
