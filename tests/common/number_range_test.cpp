// Numbers from outside held to their kind's range: no wrap, no overflow, no NaN, no "forever".
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "common/number_range.h"

using namespace minifyd;

TEST_CASE("a number is read whole, finite and within its kind's range", "[number_range]") {
  CHECK(parse_number("8", number_ranges::workers).value() == 8);
  CHECK(parse_number("0.5", number_ranges::timeout_seconds).value() == 0.5);
  CHECK(parse_number("-1000000", number_ranges::priority).value() == -1'000'000);

  CHECK(parse_number("100000", number_ranges::workers).error().message ==
        "'100000' is out of range: must be an integer from 1 to 256");
  CHECK(parse_number("18446744073709551617", number_ranges::workers).error().message ==
        "'18446744073709551617' is out of range: must be an integer from 1 to 256");
  CHECK(parse_number("-1", number_ranges::cpu_limit_seconds).error().message ==
        "'-1' is out of range: must be an integer of seconds from 0 to 31536000");
  CHECK(parse_number("2147483648", number_ranges::priority).error().message ==
        "'2147483648' is out of range: must be an integer from -1000000 to 1000000");
  for (const char* text : {"nan", "inf", "-inf", "1e308", "1e999"})
    CHECK_FALSE(parse_number(text, number_ranges::timeout_seconds).has_value());
  CHECK(parse_number("1.5", number_ranges::workers).error().message ==
        "'1.5' is out of range: must be an integer from 1 to 256");
  CHECK(parse_number("", number_ranges::workers).error().message == "'' is not a number: must be an integer from 1 to 256");
  CHECK(parse_number("8 workers", number_ranges::workers).error().message ==
        "'8 workers' is not a number: must be an integer from 1 to 256");
}

TEST_CASE("a value decoded elsewhere is checked against the same range", "[number_range]") {
  CHECK(check_number(1e308, number_ranges::max_time_seconds).error().message ==
        "1e+308 is out of range: must be a number of seconds from 0.001 to 31536000");
  CHECK_FALSE(check_number(std::numeric_limits<double>::quiet_NaN(), number_ranges::timeout_seconds).has_value());
  CHECK(check_number(3600, number_ranges::max_time_seconds).value() == 3600);
  CHECK(describe(number_ranges::keep_results_days) == "a number of days from 1e-05 to 36500");
}
