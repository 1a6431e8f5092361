// Numbers from outside, held to their kind's range.
#include "common/number_range.h"

#include <cmath>
#include <cstdlib>
#include <sstream>

namespace minifyd {
namespace {

std::string format(double value) {
  std::ostringstream text;
  text.precision(15);
  text << value;
  return text.str();
}

}  // namespace

std::string describe(const NumberRange& range) {
  std::string kind = range.integer ? "an integer" : "a number";
  if (*range.unit) kind += std::string(" of ") + range.unit;
  return kind + " from " + format(range.min) + " to " + format(range.max);
}

Expected<double> check_number(double value, const NumberRange& range) {
  bool whole = !range.integer || std::floor(value) == value;
  if (std::isfinite(value) && whole && value >= range.min && value <= range.max) return value;
  return make_error(ErrorKind::invalid_input, format(value) + " is out of range: must be " + describe(range));
}

Expected<double> parse_number(std::string_view text, const NumberRange& range) {
  std::string copy(text);
  // strtod also reads "nan", "inf" and hexadecimal floats: check_number refuses the first two, and
  // a hexadecimal count is still a count.
  char* end = nullptr;
  double value = copy.empty() ? 0 : std::strtod(copy.c_str(), &end);
  if (copy.empty() || end != copy.c_str() + copy.size())
    return make_error(ErrorKind::invalid_input, "'" + copy + "' is not a number: must be " + describe(range));
  // A value past double's range reads as an infinity, which check_number refuses too.
  if (!check_number(value, range))
    return make_error(ErrorKind::invalid_input, "'" + copy + "' is out of range: must be " + describe(range));
  return value;
}

}  // namespace minifyd
