// Copying search states and measuring them as fx_minifier does.
#include "daemon/search/search_state.h"

#include <stdexcept>

namespace minifyd::search {
namespace {

// The nodes an eager value may be asked of: all but placeholders and the output (a get_attr's or a
// tuple's is asked for, and comes as none stored).
bool has_value(const Node& node) { return node.op() != OpCode::placeholder && node.op() != OpCode::output; }

std::size_t leaves(const Value& value) {
  if (value.is<NoneValue>()) return 0;
  if (!value.is<ListValue>()) return 1;
  std::size_t count = 0;
  for (const Value& item : value.as<ListValue>().items) count += leaves(item);
  return count;
}

}  // namespace

EagerValueMap eager_values_from(const std::vector<protocol::PropagatedValue>& propagated) {
  EagerValueMap values;
  for (const auto& value : propagated) values[value.node] = EagerValue{value.storage, value.tensor};
  return values;
}

EagerValues::EagerValues(EagerValueMap values) : values_(std::move(values)) {}

std::shared_ptr<EagerValues> EagerValues::asked_through(Asker asker) {
  auto values = std::make_shared<EagerValues>();
  values->asker_ = std::move(asker);
  return values;
}

void EagerValues::ask(const GraphDocument& document) const {
  if (!asker_) return;
  std::size_t ask = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ask = arrived_.size();
    bool wanted = false;
    for (const Node* node : document.graph.nodes())
      if (has_value(*node)) wanted = asked_.emplace(node->name(), ask).second || wanted;
    if (!wanted) return;
    arrived_.push_back(false);
  }
  asker_(ask, clone_document(document));
}

bool EagerValues::known(std::string_view node) const {
  if (!asker_) return true;
  auto asked = asked_.find(node);
  return asked != asked_.end() && arrived_[asked->second];
}

bool EagerValues::all_known(const Graph& graph) const {
  for (const Node* node : graph.nodes())
    if (has_value(*node) && !known(node->name())) return false;
  return true;
}

bool EagerValues::answered(const Graph& graph) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return failed_ || all_known(graph);
}

bool EagerValues::cover(const Graph& graph) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return !failed_ && all_known(graph);
}

void EagerValues::arrive(std::size_t ask, const EagerValueMap& values) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (ask >= arrived_.size()) throw std::logic_error("eager values arrived for an ask never made");
  // std::map keeps the addresses find() handed out as values are added.
  for (const auto& [node, value] : values) values_.emplace(node, value);
  arrived_[ask] = true;
}

void EagerValues::fail() {
  std::lock_guard<std::mutex> lock(mutex_);
  failed_ = true;
}

bool EagerValues::failed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return failed_;
}

const EagerValue* EagerValues::find(std::string_view node) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!known(node)) throw std::logic_error("the eager value of '" + std::string(node) + "' was read before it arrived");
  auto found = values_.find(node);
  return found == values_.end() ? nullptr : &found->second;
}

EagerValueMap EagerValues::all() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return values_;
}

GraphDocument clone_document(const GraphDocument& document) {
  GraphDocument copy;
  copy.graph = document.graph.clone();
  copy.storages = document.storages;
  copy.inputs = document.inputs;
  copy.constants = document.constants;
  return copy;
}

SearchState clone_state(const SearchState& state) {
  return SearchState{clone_document(state.document), state.loads, state.eager};
}

bool is_load(const SearchState& state, const Node& node) {
  return node.op() == OpCode::placeholder && state.loads.count(node.name()) != 0;
}

std::size_t input_count(const SearchState& state) {
  std::size_t count = 0;
  for (const Node* node : state.document.graph.placeholders())
    if (!is_load(state, *node)) ++count;
  return count;
}

std::size_t output_count(const Graph& graph) {
  const Node* output = graph.output();
  return output == nullptr || output->args().empty() ? 0 : leaves(output->args()[0]);
}

bool made_progress(const SearchState& from, const SearchState& to) {
  return to.document.graph.size() < from.document.graph.size() ||
         input_count(to) > input_count(from) ||
         output_count(to.document.graph) < output_count(from.document.graph);
}

InputBindings input_bindings(const GraphDocument& document) {
  InputBindings bindings;
  std::vector<Node*> placeholders = document.graph.placeholders();
  for (std::size_t i = 0; i < placeholders.size() && i < document.inputs.size(); ++i)
    bindings.emplace(placeholders[i]->name(), document.inputs[i]);
  return bindings;
}

void rebind_inputs(GraphDocument& document, const InputBindings& bindings) {
  document.inputs.clear();
  for (const Node* node : document.graph.placeholders()) document.inputs.push_back(bindings.at(node->name()));
}

bool is_symint_input(const InputBindings& bindings, std::string_view name) {
  auto found = bindings.find(name);
  return found != bindings.end() && std::holds_alternative<SymIntInput>(found->second);
}

void forget_erased_loads(SearchState& state) {
  for (auto it = state.loads.begin(); it != state.loads.end();) {
    const Node* node = state.document.graph.find(*it);
    it = node != nullptr && node->op() == OpCode::placeholder ? std::next(it) : state.loads.erase(it);
  }
}

void prune_unreferenced_tensors(GraphDocument& document) {
  std::map<std::string, TensorMeta> constants;
  for (const Node* node : document.graph.nodes())
    if (node->op() == OpCode::get_attr) {
      auto it = document.constants.find(node->target());
      if (it != document.constants.end()) constants.insert(*it);
    }
  document.constants = std::move(constants);

  std::vector<TensorMeta*> tensors;
  for (GraphInput& input : document.inputs)
    if (TensorMeta* tensor = input_tensor(input)) tensors.push_back(tensor);
  for (auto& [name, constant] : document.constants) tensors.push_back(&constant);
  std::vector<bool> used(document.storages.size(), false);
  for (const TensorMeta* tensor : tensors) {
    if (tensor->storage >= used.size()) return;  // invalid: left for document_problems() to name
    used[tensor->storage] = true;
  }
  std::vector<std::size_t> renumbered(used.size());
  std::vector<StorageRef> storages;
  for (std::size_t i = 0; i < used.size(); ++i) {
    renumbered[i] = storages.size();
    if (used[i]) storages.push_back(std::move(document.storages[i]));
  }
  for (TensorMeta* tensor : tensors) tensor->storage = renumbered[tensor->storage];
  document.storages = std::move(storages);
}

}  // namespace minifyd::search
