// A failed command's exit code.
#include "daemon/options/exit_codes.h"

namespace minifyd::options {

int exit_code_of(const Error& error) {
  if (error.kind == ErrorKind::no_space) return exit_no_space;
  return error.kind == ErrorKind::io ? exit_worker_error : exit_usage;
}

}  // namespace minifyd::options
