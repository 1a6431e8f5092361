// How deeply a JSON text nests, measured without parsing it. Parsing is safe at any depth, but
// copying, comparing or printing a parsed value recurses once per level: a line of a million '['
// would overflow the stack of whatever handles it, so hostile input is measured first.
#pragma once

#include <cstddef>
#include <string_view>

namespace minifyd::protocol {

// The deepest nesting of arrays and objects in `text` (0 for a scalar); brackets inside strings do
// not count. Linear in the text; well-formedness is left to the parser.
std::size_t json_nesting_depth(std::string_view text);

}  // namespace minifyd::protocol
