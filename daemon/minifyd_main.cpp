// The `minifyd` executable: the daemon (docs/daemon.md).
#include "daemon/service/minifyd_command.h"

int main(int argc, char** argv) { return minifyd::service::run_minifyd(argc, argv); }
