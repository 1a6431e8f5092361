// The format and version of a saved document.
#include "protocol/json_fields.h"

#include <algorithm>

namespace minifyd::protocol {

Expected<std::int64_t> document_version(const JsonView& view, const DocumentFormat& format) {
  if (auto object = view.as_object(); !object) return object.error();
  std::optional<std::string> name;
  std::optional<std::int64_t> version;
  if (auto read = view.read_optional("format", name); !read) return read.error();
  if (auto read = view.read_optional("version", version); !read) return read.error();
  if (!name && !version && format.oldest == 0) return std::int64_t{0};
  std::string expected = std::string(format.format) + " version " +
                         (format.oldest == format.version ? "" : std::to_string(format.oldest) + " to ") +
                         std::to_string(format.version);
  if (!name || !version || *name != format.format || *version < std::max<std::int64_t>(format.oldest, 1) ||
      *version > format.version)
    return view.error("format: '" + name.value_or("") + "' version " + (version ? std::to_string(*version) : "none") +
                      " is not " + expected);
  return *version;
}

}  // namespace minifyd::protocol
