// The hooks' python.
#include "daemon/run/session_hooks.h"

namespace minifyd::run {

Expected<std::string> python_of(const SessionHooks& hooks) {
  return hooks.python ? hooks.python() : make_error(ErrorKind::invalid_input, "no python given");
}

}  // namespace minifyd::run
