// The `minify` executable.
#include "daemon/cli/cli.h"

int main(int argc, char** argv) { return minifyd::cli::run(argc, argv); }
