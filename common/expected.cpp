// Names of error kinds, as shown to users and written into JSON replies.
#include "common/expected.h"

namespace minifyd {

const char* to_string(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::invalid_input: return "invalid_input";
    case ErrorKind::io: return "io";
    case ErrorKind::corrupt: return "corrupt";
    case ErrorKind::not_found: return "not_found";
    case ErrorKind::unsupported: return "unsupported";
    case ErrorKind::no_space: return "no_space";
  }
  return "unknown";
}

}  // namespace minifyd
