// Decoding and encoding of a graph document's tensors: their metadata, storages, fills and the graph's
// inputs.
#include "common/tensor_codec.h"

#include "common/sha256.h"

namespace minifyd {
namespace {

using nlohmann::json;

Expected<std::vector<std::int64_t>> decode_int_list(const JsonView& view) {
  auto size = view.array_size();
  if (!size) return size.error();
  std::vector<std::int64_t> values;
  for (std::size_t i = 0; i < *size; ++i) {
    auto value = view.item(i).as_int();
    if (!value) return value.error();
    values.push_back(*value);
  }
  return values;
}

}  // namespace

Expected<StorageFill> decode_storage_fill(const JsonView& view) {
  StorageFill fill;
  std::string kind, dtype;
  if (auto read = view.read("kind", kind); !read) return read.error();
  auto parsed_kind = parse_fill_kind(kind);
  if (!parsed_kind) return view.error("kind: unknown fill '" + kind + "' (expected zeros, ones or random)");
  fill.kind = *parsed_kind;
  if (auto read = view.read("dtype", dtype); !read) return read.error();
  auto parsed_dtype = parse_dtype(dtype);
  if (!parsed_dtype) return view.error("dtype: unknown dtype '" + dtype + "' (known: " + dtype_names() + ")");
  fill.dtype = *parsed_dtype;
  if (fill.kind != FillKind::random) return fill;
  if (auto read = view.read("seed", fill.seed); !read) return read.error();
  for (auto [key, bound] : {std::pair{"low", &fill.low}, std::pair{"high", &fill.high}}) {
    auto member = view.field(key);
    if (!member) return member.error();
    auto number = member->as_float();
    if (!number) return number.error();
    *bound = *number;
  }
  return fill;
}

json encode_storage_fill(const StorageFill& fill) {
  json encoded = {{"kind", to_string(fill.kind)}, {"dtype", to_string(fill.dtype)}};
  if (fill.kind == FillKind::random) {
    encoded["seed"] = fill.seed;
    encoded["low"] = encode_float(fill.low);
    encoded["high"] = encode_float(fill.high);
  }
  return encoded;
}

Expected<StorageRef> decode_storage_ref(const JsonView& view) {
  StorageRef storage;
  auto fill = view.optional_field("fill");
  if (!fill) return fill.error();
  if (*fill) {
    auto decoded = decode_storage_fill(**fill);
    if (!decoded) return decoded.error();
    storage.fill = *decoded;
    auto hash = view.optional_field("hash");
    if (!hash) return hash.error();
    if (*hash) return (*hash)->error("a filled storage has no hash (its bytes are made, not stored)");
  } else {
    auto hash = view.field("hash");
    if (!hash) return hash.error();
    auto hash_text = hash->as_string();
    if (!hash_text) return hash_text.error();
    if (!is_sha256_hex(*hash_text))
      return hash->error("'" + *hash_text + "' is not a SHA-256 digest (64 lowercase hex digits)");
    storage.hash = *hash_text;
  }
  auto nbytes = view.field("nbytes");
  if (!nbytes) return nbytes.error();
  auto nbytes_value = nbytes->as_int();
  if (!nbytes_value) return nbytes_value.error();
  if (*nbytes_value < 0) return nbytes->error("must not be negative");
  storage.nbytes = static_cast<std::uint64_t>(*nbytes_value);
  auto device = view.optional_field("device");
  if (!device) return device.error();
  if (*device) {
    auto name = (*device)->as_string();
    if (!name) return name.error();
    if (!is_valid_device(*name))
      return (*device)->error("unknown device '" + *name + "' (expected cpu, cuda, cuda:N or meta)");
    storage.device = *name;
  }
  if (storage.fill)
    if (std::string problem = fill_problem(*storage.fill, storage.nbytes); !problem.empty())
      return (*fill)->error(problem);
  return storage;
}

Expected<TensorMeta> decode_tensor_meta(const JsonView& view) {
  TensorMeta tensor;
  auto storage = view.field("storage");
  if (!storage) return storage.error();
  auto index = storage->as_int();
  if (!index) return index.error();
  if (*index < 0) return storage->error("must not be negative");
  tensor.storage = static_cast<std::size_t>(*index);

  auto dtype = view.field("dtype");
  if (!dtype) return dtype.error();
  auto dtype_name = dtype->as_string();
  if (!dtype_name) return dtype_name.error();
  auto parsed = parse_dtype(*dtype_name);
  if (!parsed) return dtype->error("unknown dtype '" + *dtype_name + "' (known: " + dtype_names() + ")");
  tensor.dtype = *parsed;

  for (auto [key, target] : {std::pair{"shape", &tensor.shape}, std::pair{"stride", &tensor.stride}}) {
    auto list_view = view.field(key);
    if (!list_view) return list_view.error();
    auto values = decode_int_list(*list_view);
    if (!values) return values.error();
    *target = std::move(*values);
  }
  auto offset = view.optional_field("storage_offset");
  if (!offset) return offset.error();
  if (*offset) {
    auto value = (*offset)->as_int();
    if (!value) return value.error();
    tensor.storage_offset = *value;
  }
  auto requires_grad = view.optional_field("requires_grad");
  if (!requires_grad) return requires_grad.error();
  if (*requires_grad) {
    auto value = (*requires_grad)->as_bool();
    if (!value) return value.error();
    tensor.requires_grad = *value;
  }
  return tensor;
}

json encode_storage_ref(const StorageRef& storage) {
  if (storage.fill)
    return json{{"fill", encode_storage_fill(*storage.fill)}, {"nbytes", storage.nbytes}, {"device", storage.device}};
  return json{{"hash", storage.hash}, {"nbytes", storage.nbytes}, {"device", storage.device}};
}

json encode_tensor_meta(const TensorMeta& tensor) {
  return json{{"storage", tensor.storage},          {"dtype", to_string(tensor.dtype)},
              {"shape", tensor.shape},              {"stride", tensor.stride},
              {"storage_offset", tensor.storage_offset}, {"requires_grad", tensor.requires_grad}};
}

json encode_graph_input(const GraphInput& input) {
  if (const TensorMeta* tensor = input_tensor(input)) return encode_tensor_meta(*tensor);
  return json{{"symint", std::get<SymIntInput>(input).value}};
}

Expected<GraphInput> decode_graph_input(const JsonView& view) {
  if (!view.raw().is_object() || !view.raw().contains("symint")) {
    auto tensor = decode_tensor_meta(view);
    if (!tensor) return tensor.error();
    return GraphInput{std::move(*tensor)};
  }
  auto value = view.field("symint")->as_int();
  if (!value) return value.error();
  return GraphInput{SymIntInput{*value}};
}

}  // namespace minifyd
