// Decoding a request's graph and loading its tensors.
#include "worker/loaded_graph.h"

#include <unordered_map>

#include "common/graph_codec.h"
#include "worker/blob_bytes.h"
#include "worker/tensor_loader.h"

namespace minifyd::worker {
namespace {

// Copies tensors, one storage copy per distinct storage.
class AliasingCopier {
 public:
  explicit AliasingCopier(bool to_fp64) : to_fp64_(to_fp64) {}

  at::Tensor copy(const at::Tensor& tensor) {
    at::Tensor copied;
    if (to_fp64_ && tensor.is_floating_point()) {
      copied = tensor.detach().to(at::kDouble);
    } else if (!tensor.has_storage()) {
      copied = tensor.detach().clone();
    } else {
      const c10::Storage& storage = tensor.storage();
      auto found = storages_.find(storage.unsafeGetStorageImpl());
      if (found == storages_.end()) {
        found = storages_.emplace(storage.unsafeGetStorageImpl(), copy_storage(storage)).first;
      }
      copied = at::empty({0}, tensor.options()).set_(found->second, tensor.storage_offset(), tensor.sizes(), tensor.strides());
    }
    if (tensor.requires_grad()) copied.requires_grad_(true);
    return copied;
  }

 private:
  bool to_fp64_;
  std::unordered_map<const c10::StorageImpl*, c10::Storage> storages_;
};

}  // namespace

Expected<LoadedGraph> load_graph(const nlohmann::json& graph, const ContentStore& store,
                                 std::optional<at::Device> cuda_device, BlobCache* cache,
                                 const protocol::VouchedBlobs& vouched, const OperatorScope& operators) {
  auto document = decode_graph_document(graph, operators);
  if (!document) return document.error().with_context("graph");
  LoadedGraph loaded{std::move(*document), {}, {}};
  TensorLoader loader(loaded.document, store, cuda_device, cache, &vouched);
  auto inputs = loader.load_inputs();
  if (!inputs) return inputs.error();
  auto constants = loader.load_constants();
  if (!constants) return constants.error();
  loaded.inputs = std::move(*inputs);
  loaded.constants = std::move(*constants);
  return loaded;
}

RunArguments fresh_arguments(const LoadedGraph& graph, bool to_fp64) {
  AliasingCopier copier(to_fp64);
  RunArguments arguments;
  arguments.inputs.reserve(graph.inputs.size());
  for (const c10::IValue& input : graph.inputs)
    arguments.inputs.emplace_back(input.isTensor() ? c10::IValue(copier.copy(input.toTensor())) : input);
  for (const auto& [name, tensor] : graph.constants) arguments.constants.emplace(name, copier.copy(tensor));
  return arguments;
}

}  // namespace minifyd::worker
