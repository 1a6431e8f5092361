// Printing a query's result.
#include "daemon/cli/query_output.h"

#include <iostream>

#include "daemon/cli/cli.h"

namespace minifyd::cli {

int print_query_result(const nlohmann::json& result, bool json) {
  if (json) std::cout << result.dump() << "\n";
  else std::cout << result.value("summary", std::string()) << "\n";
  return result.value("fails", false) ? exit_failed : exit_ok;
}

}  // namespace minifyd::cli
