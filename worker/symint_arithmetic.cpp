#include "worker/symint_arithmetic.h"

#include <array>
#include <limits>
#include <string>

namespace minifyd::worker {
namespace {

// Indexed by SymIntOp.
constexpr std::array<SymIntArithmetic, 6> table = {{
    {SymIntOp::add, "aten::add.int", 2},
    {SymIntOp::sub, "aten::sub.int", 2},
    {SymIntOp::mul, "aten::mul.int", 2},
    {SymIntOp::floordiv, "aten::floordiv.int", 2},
    {SymIntOp::mod, "aten::remainder.int", 2},
    {SymIntOp::neg, "aten::neg.int", 1},
}};

Error overflow(const SymIntArithmetic& arithmetic, std::int64_t a, std::int64_t b) {
  return make_error(ErrorKind::invalid_input, std::string(symint_target(arithmetic.op)) + "(" + std::to_string(a) +
                                                  (arithmetic.arity == 2 ? ", " + std::to_string(b) : "") +
                                                  ") does not fit in a 64-bit int");
}

}  // namespace

const SymIntArithmetic* symint_arithmetic(std::string_view target) {
  auto op = symint_op(target);
  return op ? &table[static_cast<std::size_t>(*op)] : nullptr;
}

Expected<std::int64_t> apply_symint_arithmetic(const SymIntArithmetic& arithmetic, std::int64_t a, std::int64_t b) {
  using Op = SymIntOp;
  std::int64_t result = 0;
  bool overflowed = false;
  switch (arithmetic.op) {
    case Op::add: overflowed = __builtin_add_overflow(a, b, &result); break;
    case Op::sub: overflowed = __builtin_sub_overflow(a, b, &result); break;
    case Op::mul: overflowed = __builtin_mul_overflow(a, b, &result); break;
    case Op::neg: overflowed = __builtin_sub_overflow(std::int64_t{0}, a, &result); break;
    case Op::floordiv:
    case Op::mod: {
      if (b == 0)
        return make_error(ErrorKind::invalid_input,
                          std::string(symint_target(arithmetic.op)) + "(" + std::to_string(a) +
                              ", 0): division by zero");
      if (a == std::numeric_limits<std::int64_t>::min() && b == -1) return overflow(arithmetic, a, b);
      std::int64_t quotient = a / b, remainder = a % b;
      // C++ truncates toward zero; Python floors, so the remainder takes the divisor's sign.
      if (remainder != 0 && ((remainder < 0) != (b < 0))) {
        quotient -= 1;
        remainder += b;
      }
      result = arithmetic.op == Op::floordiv ? quotient : remainder;
      break;
    }
  }
  if (overflowed) return overflow(arithmetic, a, b);
  return result;
}

}  // namespace minifyd::worker
