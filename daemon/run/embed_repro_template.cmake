# Writes the C++ header that carries repro.py's sources into `minify`, cut where repro_script.cpp
# fills them in, so the C++ side knows no marker and a template without them fails the build:
#   before_loader    worker/python/minifyd/repro_template.py up to its `from minifyd.graph_format import` line
#   loader           worker/python/minifyd/graph_format.py up to its "# ---- end of the loader:" line,
#                    its "GRAPH_TARGETS_JSON = " line holding graph_targets.json as a raw string, then
#                    worker/python/minifyd/output_checks.py, in place of the template's
#                    `from minifyd.output_checks import` line, which follows its loader line
#   before_settings  the template after that line, up to and with the "SETTINGS_JSON = " that
#                    starts its settings line
#   after_settings   the template from the end of that line on
# minifyd/repro_writer.py fills in the same two lines. Run by daemon/CMakeLists.txt:
#   cmake -DGRAPH_FORMAT=graph_format.py -DGRAPH_TARGETS=graph_targets.json -DOUTPUT_CHECKS=output_checks.py
#         -DTEMPLATE=repro_template.py -DOUTPUT=header.h -P embed_repro_template.cmake
cmake_minimum_required(VERSION 3.18)

# The position of the one line of text that starts with prefix (in out_start) and of its end (out_end).
function(find_line text prefix name out_start out_end)
  string(FIND "${text}" "\n${prefix}" start)
  string(FIND "${text}" "\n${prefix}" last REVERSE)
  if(start EQUAL -1 OR NOT start EQUAL last)
    message(FATAL_ERROR "${name} must have exactly one line starting with '${prefix}'")
  endif()
  math(EXPR start "${start} + 1")
  string(SUBSTRING "${text}" ${start} -1 rest)
  string(FIND "${rest}" "\n" length)
  math(EXPR end "${start} + ${length}")
  set(${out_start} ${start} PARENT_SCOPE)
  set(${out_end} ${end} PARENT_SCOPE)
endfunction()

file(READ "${GRAPH_FORMAT}" graph_format)
string(FIND "${graph_format}" "\n# ---- end of the loader:" loader_end)
if(loader_end EQUAL -1)
  message(FATAL_ERROR "${GRAPH_FORMAT} lacks the '# ---- end of the loader:' line that ends its loader")
endif()
math(EXPR loader_end "${loader_end} + 1")
string(SUBSTRING "${graph_format}" 0 ${loader_end} loader)

file(READ "${GRAPH_TARGETS}" graph_targets)
string(FIND "${graph_targets}" "'''" quotes)
string(FIND "${graph_targets}" "\\" backslash)
if(NOT quotes EQUAL -1 OR NOT backslash EQUAL -1)
  message(FATAL_ERROR "${GRAPH_TARGETS} holds ''' or a backslash, which a Python raw string cannot")
endif()
set(targets_prefix "GRAPH_TARGETS_JSON = ")
find_line("${loader}" "${targets_prefix}" "${GRAPH_FORMAT}" targets_start targets_end)
string(SUBSTRING "${loader}" 0 ${targets_start} loader_head)
string(SUBSTRING "${loader}" ${targets_end} -1 loader_tail)
set(loader "${loader_head}${targets_prefix}r'''${graph_targets}'''${loader_tail}")

file(READ "${TEMPLATE}" template)
set(settings_prefix "SETTINGS_JSON = ")
find_line("${template}" "from minifyd.graph_format import" "${TEMPLATE}" loader_start loader_line_end)
find_line("${template}" "from minifyd.output_checks import" "${TEMPLATE}" checks_start checks_end)
find_line("${template}" "${settings_prefix}" "${TEMPLATE}" settings_start settings_end)
math(EXPR after_loader_line "${loader_line_end} + 1")
if(NOT checks_start EQUAL after_loader_line)
  message(FATAL_ERROR "${TEMPLATE}: the `from minifyd.output_checks import` line must follow the `from minifyd.graph_format import` line")
endif()
if(NOT checks_end LESS settings_start)
  message(FATAL_ERROR "${TEMPLATE}: the import lines must come before the settings line")
endif()
file(READ "${OUTPUT_CHECKS}" output_checks)
string(APPEND loader "${output_checks}")
string(LENGTH "${settings_prefix}" prefix_length)
math(EXPR before_settings_start "${checks_end} + 1")
math(EXPR before_settings_length "${settings_start} + ${prefix_length} - ${before_settings_start}")
string(SUBSTRING "${template}" 0 ${loader_start} before_loader)
string(SUBSTRING "${template}" ${before_settings_start} ${before_settings_length} before_settings)
string(SUBSTRING "${template}" ${settings_end} -1 after_settings)

# Raw string literals: the text goes in unchanged as long as it lacks the closing delimiter.
set(delimiter "repro_py")
set(body "")
foreach(part before_loader loader before_settings after_settings)
  string(FIND "${${part}}" ")${delimiter}\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "${part} contains ')${delimiter}\"', which would end its C++ raw string literal")
  endif()
  string(APPEND body "inline constexpr std::string_view ${part} = R\"${delimiter}(${${part}})${delimiter}\";\n")
endforeach()

file(WRITE "${OUTPUT}"
  "// Generated at build time by daemon/run/embed_repro_template.cmake from worker/python/minifyd/repro_template.py,\n"
  "// worker/python/minifyd/graph_format.py and worker/python/minifyd/output_checks.py: edit those, not this.\n"
  "#pragma once\n\n#include <string_view>\n\nnamespace minifyd::run::repro_template {\n\n"
  "${body}\n}  // namespace minifyd::run::repro_template\n")
