// bind_argument(), which both the eager interpreter and the TorchScript lowering bind with: every
// kind of value against every kind of parameter aten's schemas have, conversions as Python's argument
// parser makes them, refusals that name what was expected.
#include <ATen/ATen.h>

#include "worker/argument_binding.h"

#include "tests/support/catch_torch.h"
#include "tests/support/graph_builder.h"

using namespace minifyd;
using worker::BoundArgument;
using worker::EnumEncoding;

namespace {

// A parameter whose declared type is also the type its kernels take.
BoundArgument bound_to(const Value& value, const c10::TypePtr& type, std::optional<std::int32_t> size = std::nullopt,
                   EnumEncoding encoding = EnumEncoding::typed) {
  auto bound = worker::bind_argument(value, type, type, size, worker::EagerOptions{}, encoding);
  INFO((bound ? std::string() : bound.error().message));
  REQUIRE(bound.has_value());
  return std::move(*bound);
}

std::string refusal(const Value& value, const c10::TypePtr& real, const c10::TypePtr& fake) {
  auto bound = worker::bind_argument(value, real, fake, std::nullopt, worker::EagerOptions{}, EnumEncoding::typed);
  REQUIRE_FALSE(bound.has_value());
  return bound.error().message;
}

const c10::IValue& constant_of(const BoundArgument& bound) {
  REQUIRE(bound.source == BoundArgument::Source::constant);
  return bound.constant;
}

}  // namespace

TEST_CASE("numbers bind as Python passes them", "[binding]") {
  CHECK(constant_of(bound_to(std::int64_t{3}, c10::IntType::get())).toInt() == 3);
  CHECK(constant_of(bound_to(std::int64_t{3}, c10::FloatType::get())).toDouble() == 3.0);  // int to float
  CHECK(constant_of(bound_to(2.5, c10::FloatType::get())).toDouble() == 2.5);
  CHECK(constant_of(bound_to(true, c10::BoolType::get())).toBool());
  // Scalar takes int, float and bool as they are.
  CHECK(constant_of(bound_to(std::int64_t{3}, c10::NumberType::get())).isInt());
  CHECK(constant_of(bound_to(2.5, c10::NumberType::get())).isDouble());
  CHECK(constant_of(bound_to(true, c10::NumberType::get())).isBool());
  // A number passed as a Tensor is a wrapped number of its own dtype.
  for (auto [value, dtype] : {std::pair<Value, at::ScalarType>{std::int64_t{3}, at::kLong},
                              {2.5, at::kDouble}, {true, at::kBool}}) {
    at::Tensor tensor = constant_of(bound_to(value, c10::TensorType::get())).toTensor();
    CHECK(tensor.scalar_type() == dtype);
    CHECK(tensor.unsafeGetTensorImpl()->is_wrapped_number());
  }
  CHECK_THAT(refusal(2.5, c10::IntType::get(), c10::IntType::get()), Catch::Contains("expects int, got float 2.5"));
  CHECK_THAT(refusal(std::int64_t{1}, c10::BoolType::get(), c10::BoolType::get()), Catch::Contains("expects bool"));
}

TEST_CASE("strings, devices and enums bind to their own parameters only", "[binding]") {
  CHECK(constant_of(bound_to(std::string("mean"), c10::StringType::get())).toStringRef() == "mean");
  CHECK(constant_of(bound_to(DeviceValue{"cpu"}, c10::DeviceObjType::get())).toDevice().is_cpu());
  // A dtype is typed for the boxed kernels and an int for TorchScript; an int is no dtype, as in Python.
  auto typed = worker::bind_argument(DTypeValue{DType::float16}, c10::ScalarTypeType::get(), c10::IntType::get(),
                                     std::nullopt, worker::EagerOptions{}, EnumEncoding::typed);
  REQUIRE(typed.has_value());
  auto as_int = worker::bind_argument(DTypeValue{DType::float16}, c10::ScalarTypeType::get(), c10::IntType::get(),
                                      std::nullopt, worker::EagerOptions{}, EnumEncoding::as_int);
  REQUIRE(as_int.has_value());
  CHECK(as_int->constant.toInt() == static_cast<std::int64_t>(at::kHalf));
  CHECK(typed->constant.toScalarType() == at::kHalf);
  CHECK_THAT(refusal(std::int64_t{5}, c10::ScalarTypeType::get(), c10::IntType::get()),
             Catch::Contains("expects ScalarType, got int 5"));
  CHECK_THAT(refusal(DTypeValue{DType::float32}, c10::IntType::get(), c10::IntType::get()),
             Catch::Contains("expects int, got dtype float32"));
  for (auto [value, real] : {std::pair<Value, c10::TypePtr>{LayoutValue{"strided"}, c10::LayoutType::get()},
                             {MemoryFormatValue{"contiguous_format"}, c10::MemoryFormatType::get()}}) {
    auto bound = worker::bind_argument(value, real, c10::IntType::get(), std::nullopt, worker::EagerOptions{},
                                       EnumEncoding::as_int);
    REQUIRE(bound.has_value());
    CHECK(bound->constant.isInt());
  }
}

TEST_CASE("None binds to optional parameters only; an optional takes its element too", "[binding]") {
  c10::TypePtr optional_int = c10::OptionalType::create(c10::IntType::get());
  CHECK(constant_of(bound_to(NoneValue{}, optional_int)).isNone());
  CHECK(constant_of(bound_to(std::int64_t{2}, optional_int)).toInt() == 2);
  CHECK_THAT(refusal(NoneValue{}, c10::IntType::get(), c10::IntType::get()), Catch::Contains("expects int, got None"));
}

TEST_CASE("lists: int[N] from one int, items bound one by one, nodes kept with their type", "[binding]") {
  c10::TypePtr ints = c10::ListType::ofInts();
  c10::IValue repeated = constant_of(bound_to(std::int64_t{3}, ints, 2));
  CHECK(repeated.toIntVector() == std::vector<std::int64_t>{3, 3});

  Graph graph;
  Node* x = test::placeholder(graph, "x");
  BoundArgument list = bound_to(test::list({std::int64_t{1}, test::ref(x)}), ints);
  REQUIRE(list.source == BoundArgument::Source::list);
  REQUIRE(list.items.size() == 2);
  CHECK(constant_of(list.items[0]).toInt() == 1);
  CHECK(list.items[1].source == BoundArgument::Source::node);
  CHECK(list.items[1].node == x);
  CHECK(list.items[1].type->kind() == c10::TypeKind::IntType);

  c10::TypePtr optional_tensors = c10::ListType::create(c10::OptionalType::create(c10::TensorType::get()));
  BoundArgument indices = bound_to(test::list({NoneValue{}, test::ref(x)}), optional_tensors);
  CHECK(constant_of(indices.items[0]).isNone());
  CHECK(indices.items[1].source == BoundArgument::Source::node);

  CHECK_THAT(refusal(test::list({std::int64_t{1}, 2.5}), ints, ints), Catch::Contains("[1]: expects int, got float 2.5"));
  CHECK_THAT(refusal(test::list({std::int64_t{1}}), c10::IntType::get(), c10::IntType::get()),
             Catch::Contains("expects int, got"));
}

TEST_CASE("coerce converts node values at run time as bind_argument converts constants", "[binding]") {
  CHECK(worker::coerce(c10::IValue(std::int64_t{2}), *c10::FloatType::get())->toDouble() == 2.0);
  CHECK(worker::coerce(c10::IValue(c10::complex<double>(1, 2)), *c10::NumberType::get())->isComplexDouble());
  CHECK(worker::coerce(c10::IValue(at::ones({2})), *c10::TensorType::get())->isTensor());
  CHECK_FALSE(worker::coerce(c10::IValue(at::ones({2})), *c10::IntType::get()).has_value());
  c10::IValue list = *worker::coerce(worker::make_list(c10::IntType::get(), {std::int64_t{1}, std::int64_t{2}}),
                                     *c10::ListType::ofFloats());
  CHECK(list.toListRef()[1].toDouble() == 2.0);
}
