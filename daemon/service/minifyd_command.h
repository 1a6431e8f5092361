// The `minifyd` executable's whole work, so that its main is a thin one as `minify`'s is.
#pragma once

namespace minifyd::service {

// Parses minifyd's options, opens the daemon and serves until it is stopped; returns the exit status
// (cli.h's exit codes).
int run_minifyd(int argc, char** argv);

}  // namespace minifyd::service
