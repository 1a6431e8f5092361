// A numeric option held to its kind's range (common/number_range.h) before CLI11 converts it, on
// the command line and in a `--config` file alike: "--workers: '100000' is out of range: must be an
// integer from 1 to 256", never a value wrapped into its type.
#pragma once

#include <CLI/CLI.hpp>

#include "common/number_range.h"

namespace minifyd::options {

CLI::Validator within(const NumberRange& range);

}  // namespace minifyd::options
