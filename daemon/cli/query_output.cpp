// Printing a query's result.
#include "daemon/cli/query_output.h"

#include <iostream>

#include "daemon/options/exit_codes.h"

namespace minifyd::cli {

int print_query_result(const protocol::QueryResult& result, bool json) {
  if (json) std::cout << protocol::encode(result).dump() << "\n";
  else std::cout << result.summary << "\n";
  return result.fails ? options::exit_failed : options::exit_ok;
}

}  // namespace minifyd::cli
