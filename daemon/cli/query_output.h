// How `minify query` prints a query_result(), whether its own worker or the daemon's answered.
#pragma once

#include "protocol/daemon_replies.h"

namespace minifyd::cli {

// Prints the summary line, or the JSON with --json; returns options::exit_failed when the graph fails the
// check, options::exit_ok when it passes.
int print_query_result(const protocol::QueryResult& result, bool json);

}  // namespace minifyd::cli
