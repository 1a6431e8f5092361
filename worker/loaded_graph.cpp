// Decoding a request's graph and loading its tensors.
#include "worker/loaded_graph.h"

#include "common/graph_codec.h"
#include "worker/tensor_loader.h"

namespace minifyd::worker {
namespace {

at::Tensor fresh_copy(const at::Tensor& tensor, bool to_fp64) {
  at::Tensor copy = (to_fp64 && tensor.is_floating_point()) ? tensor.detach().to(at::kDouble) : tensor.detach().clone();
  if (tensor.requires_grad()) copy.requires_grad_(true);
  return copy;
}

}  // namespace

Expected<LoadedGraph> load_graph(const nlohmann::json& graph, const ContentStore& store,
                                 std::optional<at::Device> cuda_device, BlobCache* cache) {
  auto document = decode_graph_document(graph);
  if (!document) return document.error().with_context("graph");
  LoadedGraph loaded{std::move(*document), {}, {}};
  TensorLoader loader(loaded.document, store, cuda_device, cache);
  auto inputs = loader.load_inputs();
  if (!inputs) return inputs.error();
  auto constants = loader.load_constants();
  if (!constants) return constants.error();
  loaded.inputs = std::move(*inputs);
  loaded.constants = std::move(*constants);
  return loaded;
}

std::vector<c10::IValue> copy_inputs(const std::vector<at::Tensor>& inputs, bool to_fp64) {
  std::vector<c10::IValue> copies;
  copies.reserve(inputs.size());
  for (const at::Tensor& input : inputs) copies.emplace_back(fresh_copy(input, to_fp64));
  return copies;
}

ConstantMap constants_as_fp64(const ConstantMap& constants) {
  ConstantMap cast;
  for (const auto& [name, tensor] : constants) cast.emplace(name, fresh_copy(tensor, true));
  return cast;
}

}  // namespace minifyd::worker
