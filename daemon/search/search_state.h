// The state the search reduces: a graph document, the eager values that let a node become an input
// fed from the store, and which placeholders still stand for fx_minifier's load_tensor nodes.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/graph_document.h"
#include "protocol/worker_messages.h"

namespace minifyd::search {

// One node's eager value, stored by the worker's `propagate` (fx_minifier's ConcreteProp).
struct EagerValue {
  StorageRef storage;
  TensorMeta tensor;  // tensor.storage is unused: the value has its own storage
};

// Eager values by node name. A node without one is either tuple-valued (read through getitem,
// fx_minifier's `is_tuple`) or a value propagate refused to store (it aliases another storage).
using EagerValueMap = std::map<std::string, EagerValue, std::less<>>;

EagerValueMap eager_values_from(const std::vector<protocol::PropagatedValue>& propagated);

// The eager values of a search's nodes, shared by every state of one search. Known from the start
// for every node (a resumed run, an analysis), or asked for: a run propagates the documents its search
// asks values of (SearchRunner::await_eager asks for a state's nodes before a step may turn them
// into loads). The original is asked for beside the sanity check, unless the search bisects its
// prefix before it reads any value: then only the failing prefix is, which is all it reads from there
// on. Asks and reads may come from any thread (lineages); answers arrive on the search's.
class EagerValues {
 public:
  // Hands an asked document to the propagation that answers it as `ask` (arrive or fail); called on
  // the asking thread, without locks held.
  using Asker = std::function<void(std::size_t ask, GraphDocument document)>;

  EagerValues() = default;  // known: none, for every node
  explicit EagerValues(EagerValueMap values);
  static std::shared_ptr<EagerValues> asked_through(Asker asker);

  // Asks for the values of `document`'s nodes (all but placeholders and the output) that were not
  // asked for yet (none when known from the start).
  void ask(const GraphDocument& document) const;
  // Whether every such node of `graph` has its answer, or an ask failed.
  bool answered(const Graph& graph) const;
  // Whether every such node of `graph` has its value known (stored or not), no ask having failed:
  // a state of `graph` may be saved with them.
  bool cover(const Graph& graph) const;
  void arrive(std::size_t ask, const EagerValueMap& values);
  // An ask brought none (its propagation failed): a search stops where it would need them.
  void fail();
  bool failed() const;
  // `node`'s stored value, nullptr when it has none. Reading a node not answered yet is a bug of the
  // search (a step that did not await them): std::logic_error.
  const EagerValue* find(std::string_view node) const;
  // Every stored value known.
  EagerValueMap all() const;

 private:
  // With mutex_ held.
  bool known(std::string_view node) const;
  bool all_known(const Graph& graph) const;

  Asker asker_;  // empty: known from the start, for every node
  mutable std::mutex mutex_;
  mutable std::map<std::string, std::size_t, std::less<>> asked_;  // node -> the ask that asked for it
  mutable std::vector<bool> arrived_;                              // by ask
  bool failed_ = false;
  EagerValueMap values_;
};

// A candidate or accepted state of the search. Invariant (checked by document_problems() before a
// state is evaluated): the document is valid and every name in `loads` is one of its placeholders.
// Plain value, not thread-safe; states share their eager values, which are immutable.
struct SearchState {
  GraphDocument document;
  // Placeholders standing where fx_minifier's offload mode puts a load_tensor node: a replaced
  // node's stored value, fed at the replaced node's position. They count as nodes, not inputs,
  // until consolidate_placeholders() makes the leading ones inputs. A worker sees plain inputs.
  std::set<std::string, std::less<>> loads;
  std::shared_ptr<const EagerValues> eager;
};

SearchState clone_state(const SearchState& state);
GraphDocument clone_document(const GraphDocument& document);

bool is_load(const SearchState& state, const Node& node);
// Placeholders that are not loads: fx_minifier's `inps`.
std::size_t input_count(const SearchState& state);
// The leaves of the returned value (fx_minifier's get_outputs: pytree leaves, None excluded).
std::size_t output_count(const Graph& graph);

// fx_minifier's progress rule: fewer nodes, more inputs (a computation replaced by its stored
// value), or fewer outputs.
bool made_progress(const SearchState& from, const SearchState& to);

// Each placeholder's input (tensor or SymInt) by name, so that a rewrite that reorders or drops
// placeholders can bind inputs again with rebind_inputs().
using InputBindings = std::map<std::string, GraphInput, std::less<>>;
InputBindings input_bindings(const GraphDocument& document);
// inputs[k] := bindings[name of the k-th placeholder]; names must all be bound.
void rebind_inputs(GraphDocument& document, const InputBindings& bindings);
// Whether the placeholder named `name` is a SymInt input, which no rewrite drops: tensor shapes
// may name it where no node uses it (a graph without it cannot run).
bool is_symint_input(const InputBindings& bindings, std::string_view name);
// Drops loads that no longer name a placeholder (after nodes were erased).
void forget_erased_loads(SearchState& state);
// Drops constants no get_attr names and storages no tensor views (the rest keep their order).
// Changes neither the canonical hash nor what a worker runs; keeps results and gc roots tidy.
void prune_unreferenced_tensors(GraphDocument& document);

}  // namespace minifyd::search
