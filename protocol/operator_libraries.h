// The operator libraries a job names, as every message that carries them writes them: a worker request
// (evaluate, propagate, analyze), an evaluation spec (so a checkpoint, a run spec and a job):
// "op_libraries": [{"namespace": NS, "path": "/abs/lib.so", "sha256": HEX}], absent when there are none.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "common/expected.h"
#include "common/json_view.h"
#include "common/operator_library.h"

namespace minifyd::protocol {

inline constexpr const char* op_libraries_key = "op_libraries";

// Adds `libraries` to `message` under op_libraries_key, unless there are none.
void encode_op_libraries(const std::vector<OperatorLibrary>& libraries, nlohmann::json& message);
// The op_libraries member of `view` (none when absent): each namespace an identifier the rule does not
// already hold, each path absolute, each hash 64 lowercase hex digits, no namespace twice.
Expected<std::vector<OperatorLibrary>> decode_op_libraries(const JsonView& view);

}  // namespace minifyd::protocol
