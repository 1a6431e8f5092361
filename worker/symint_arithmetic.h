// The int arithmetic a graph traced with dynamic shapes computes on its SymInt inputs
// (operator.add, operator.floordiv, ...): its value as Python computes it, for the eager
// interpreter, and the TorchScript operator that computes the same, for the torchscript lowering.
#pragma once

#include <cstdint>
#include <string_view>

#include "common/expected.h"
#include "common/graph.h"

namespace minifyd::worker {

struct SymIntArithmetic {
  SymIntOp op;
  std::string_view torchscript_schema;  // "aten::floordiv.int": TorchScript's int operator, Python's semantics
  std::size_t arity;                    // 1 (neg) or 2
};

// Null for a target that is not SymInt arithmetic (common/graph.h's symint_op).
const SymIntArithmetic* symint_arithmetic(std::string_view target);

// operator.X(a, b) as Python computes it on ints: floor division and a modulo with the divisor's
// sign; b is ignored for neg. Division by zero and overflow are errors naming the operation.
Expected<std::int64_t> apply_symint_arithmetic(const SymIntArithmetic& arithmetic, std::int64_t a, std::int64_t b);

}  // namespace minifyd::worker
