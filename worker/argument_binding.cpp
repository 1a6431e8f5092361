#include "worker/argument_binding.h"

#include <string>
#include <utility>

namespace minifyd::worker {
namespace {

Error mismatch(const Value& value, const c10::TypePtr& real) {
  return make_error(ErrorKind::invalid_input, "expects " + real->str() + ", got " + describe(value));
}

BoundArgument constant_argument(c10::IValue value, c10::TypePtr type) {
  BoundArgument bound;
  bound.constant = std::move(value);
  bound.type = std::move(type);
  return bound;
}

Expected<BoundArgument> bind_list(const Value& value, const c10::TypePtr& real, const c10::TypePtr& fake,
                                  std::optional<std::int32_t> size, const EagerOptions& options,
                                  EnumEncoding encoding) {
  const c10::TypePtr& real_element = real->expectRef<c10::ListType>().getElementType();
  const c10::TypePtr& fake_element = fake->expectRef<c10::ListType>().getElementType();
  if (value.is<std::int64_t>() && fake_element->kind() == c10::TypeKind::IntType) {
    std::vector<c10::IValue> repeated(static_cast<std::size_t>(size.value_or(1)), value.as<std::int64_t>());
    return constant_argument(make_list(fake_element, std::move(repeated)), fake);
  }
  if (!value.is<ListValue>()) return mismatch(value, real);
  BoundArgument bound;
  bound.source = BoundArgument::Source::list;
  bound.type = fake_element;
  const std::vector<Value>& items = value.as<ListValue>().items;
  for (std::size_t i = 0; i < items.size(); ++i) {
    auto item = bind_argument(items[i], real_element, fake_element, std::nullopt, options, encoding);
    if (!item) return item.error().with_context("[" + std::to_string(i) + "]");
    bound.items.push_back(std::move(*item));
  }
  return bound;
}

}  // namespace

Expected<BoundArgument> bind_argument(const Value& value, const c10::TypePtr& real, const c10::TypePtr& fake,
                                      std::optional<std::int32_t> size, const EagerOptions& options,
                                      EnumEncoding encoding) {
  if (value.is<NodeRef>()) {
    BoundArgument bound;
    bound.source = BoundArgument::Source::node;
    bound.node = value.as<NodeRef>().node;
    bound.type = fake;
    return bound;
  }
  if (value.is<NoneValue>()) {
    if (fake->kind() != c10::TypeKind::OptionalType) return mismatch(value, real);
    return constant_argument(c10::IValue(), fake);
  }
  const c10::TypePtr& real_type = without_optional(real);
  const c10::TypePtr& fake_type = without_optional(fake);
  if (fake_type->kind() == c10::TypeKind::ListType) return bind_list(value, real_type, fake_type, size, options, encoding);
  if (value.is<ListValue>() || !enumeration_matches(value, real_type->kind())) return mismatch(value, real);
  auto leaf = leaf_ivalue(value, options, encoding);
  if (!leaf) return leaf.error();
  auto coerced = coerce(*leaf, *fake_type);
  if (!coerced) return mismatch(value, real);
  return constant_argument(std::move(*coerced), fake_type);
}

c10::IValue make_list(const c10::TypePtr& element_type, std::vector<c10::IValue> items) {
  // int[] for SymInt[] in 2.x, whose kernels convert an int list themselves; Optional[Tensor] for Tensor?[].
  c10::impl::GenericList list(element_type);
  list.reserve(items.size());
  for (auto& item : items) list.push_back(std::move(item));
  return c10::IValue(std::move(list));
}

std::optional<c10::IValue> coerce(const c10::IValue& value, const c10::Type& type) {
  switch (type.kind()) {
    case c10::TypeKind::TensorType:
      if (value.isTensor()) return value;
      if (value.isInt() || value.isDouble() || value.isBool()) return c10::IValue(wrapped_number(value));
      break;
    case c10::TypeKind::IntType:
      if (value.isInt()) return value;
      break;
    case c10::TypeKind::FloatType:
      if (value.isDouble()) return value;
      if (value.isInt()) return c10::IValue(static_cast<double>(value.toInt()));
      break;
    case c10::TypeKind::NumberType:
      // Python passes True to a Scalar parameter (full(..., True)); the kernel unboxes the bool.
      if (value.isInt() || value.isDouble() || value.isBool() || value.isComplexDouble()) return value;
      break;
    case c10::TypeKind::BoolType:
      if (value.isBool()) return value;
      break;
    case c10::TypeKind::StringType:
      if (value.isString()) return value;
      break;
    case c10::TypeKind::DeviceObjType:
      if (value.isDevice()) return value;
      break;
    case c10::TypeKind::OptionalType:
      if (value.isNone()) return value;
      return coerce(value, *type.expectRef<c10::OptionalType>().getElementType());
    case c10::TypeKind::ListType: {
      if (!value.isList()) break;
      const c10::TypePtr& element_type = type.expectRef<c10::ListType>().getElementType();
      std::vector<c10::IValue> items;
      for (const c10::IValue& item : value.toListRef()) {
        auto coerced = coerce(item, *element_type);
        if (!coerced) return std::nullopt;
        items.push_back(std::move(*coerced));
      }
      return make_list(element_type, std::move(items));
    }
    default:
      break;
  }
  return std::nullopt;
}

}  // namespace minifyd::worker
