// The `minify` command line: parses options and dispatches to one function per subcommand.
#pragma once


namespace minifyd::cli {

int run(int argc, char** argv);

}  // namespace minifyd::cli
