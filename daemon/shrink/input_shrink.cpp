// The shrinking's rounds: each evaluates its candidates at once, on as many workers as the pool has.
#include "daemon/shrink/input_shrink.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>

#include "common/canonical_hash.h"
#include "daemon/search/search_state.h"
#include "daemon/shrink/stored_range.h"

namespace minifyd::shrink {
namespace {

using Clock = std::chrono::steady_clock;


// A tensor whose requires_grad may be dropped: an input by position, or a constant by name.
struct GradTensor {
  std::string name;
  std::optional<std::size_t> input;
  std::string constant;
};

// GraphDocument moves but does not copy, which an initializer list would.
std::vector<GraphDocument> one(GraphDocument document) {
  std::vector<GraphDocument> documents;
  documents.push_back(std::move(document));
  return documents;
}

class Shrinker {
 public:
  Shrinker(const GraphDocument& document, const ContentStore& store, search::CandidateEvaluator& evaluator,
           const ShapeProposer& propose_shapes)
      : current_(search::clone_document(document)), store_(store), evaluator_(evaluator),
        propose_shapes_(propose_shapes) {}

  Expected<ShrinkOutcome> run();

 private:
  // Whether each document still fails, all evaluated at once.
  Expected<std::vector<bool>> still_fail(const std::vector<GraphDocument>& documents);
  // The fills to try in place of stored storage `index` viewed as `dtype`, in the order they are preferred.
  Expected<std::vector<StorageFill>> fills_for(std::size_t index, DType dtype) const;
  GraphDocument filled(std::size_t index, const StorageFill& fill) const;
  Expected<void> shrink_all_at_once(std::vector<std::size_t>& left, std::vector<std::vector<StorageFill>>& fills);
  Expected<void> shrink_one_by_one(const std::vector<std::size_t>& left, std::vector<std::vector<StorageFill>>& fills);
  Expected<void> drop_requires_grad();
  Expected<void> shrink_shapes();

  GraphDocument current_;
  const ContentStore& store_;
  search::CandidateEvaluator& evaluator_;
  const ShapeProposer& propose_shapes_;
  InputShrink record_;
  std::vector<std::optional<StorageShrink>> outcomes_;  // by storage index, for the stored ones
};

Expected<std::vector<bool>> Shrinker::still_fail(const std::vector<GraphDocument>& documents) {
  std::vector<search::Candidate> batch;
  for (const GraphDocument& document : documents) {
    auto shared = std::make_shared<const GraphDocument>(search::clone_document(document));
    batch.push_back(search::Candidate{shared, canonical_hash(*shared)});
  }
  record_.queries += batch.size();
  std::vector<std::optional<search::EvaluationResult>> results(batch.size());
  std::size_t left = batch.size();
  evaluator_.evaluate(std::move(batch), [&](std::size_t index, search::EvaluationResult result) {
    results[index] = std::move(result);
    --left;
  });
  while (left > 0) evaluator_.wait();
  std::vector<bool> fails;
  for (auto& result : results) {
    if (!*result) return result->error().with_context("shrinking the inputs");
    fails.push_back(**result);
  }
  return fails;
}

Expected<std::vector<StorageFill>> Shrinker::fills_for(std::size_t index, DType dtype) const {
  const StorageRef& storage = current_.storages[index];
  std::vector<StorageFill> fills = {StorageFill{FillKind::zeros, dtype}, StorageFill{FillKind::ones, dtype}};
  auto bytes = store_.get(storage.hash, storage.nbytes);
  if (!bytes) return bytes.error().with_context("shrinking the inputs");
  if (auto range = finite_range(*bytes, dtype)) fills.push_back(StorageFill{FillKind::random, dtype, 0, range->first, range->second});
  std::vector<StorageFill> valid;
  for (const StorageFill& fill : fills)
    if (fill_problem(fill, storage.nbytes).empty()) valid.push_back(fill);
  return valid;
}

GraphDocument Shrinker::filled(std::size_t index, const StorageFill& fill) const {
  GraphDocument document = search::clone_document(current_);
  document.storages[index].fill_with(fill);
  return document;
}

// Every storage replaced by the same kind of fill: the first kind under which the graph still fails
// is kept for all of them (those it does not suit are left to shrink_one_by_one).
Expected<void> Shrinker::shrink_all_at_once(std::vector<std::size_t>& left, std::vector<std::vector<StorageFill>>& fills) {
  std::vector<GraphDocument> candidates;
  std::vector<FillKind> kinds;
  for (FillKind kind : {FillKind::zeros, FillKind::ones, FillKind::random}) {
    GraphDocument document = search::clone_document(current_);
    bool any = false;
    for (std::size_t index : left)
      for (const StorageFill& fill : fills[index])
        if (fill.kind == kind) {
          document.storages[index].fill_with(fill);
          any = true;
        }
    if (!any) continue;
    candidates.push_back(std::move(document));
    kinds.push_back(kind);
  }
  auto fails = still_fail(candidates);
  if (!fails) return fails.error();
  auto first = std::find(fails->begin(), fails->end(), true);
  if (first == fails->end()) return {};
  current_ = std::move(candidates[first - fails->begin()]);
  std::vector<std::size_t> unfilled;
  for (std::size_t index : left) {
    if (current_.storages[index].stored()) unfilled.push_back(index);
    else outcomes_[index]->replaced_by = describe(*current_.storages[index].fill);
  }
  left = std::move(unfilled);
  return {};
}

Expected<void> Shrinker::shrink_one_by_one(const std::vector<std::size_t>& left, std::vector<std::vector<StorageFill>>& fills) {
  for (std::size_t index : left) {
    std::vector<GraphDocument> candidates;
    for (const StorageFill& fill : fills[index]) candidates.push_back(filled(index, fill));
    auto fails = still_fail(candidates);
    if (!fails) return fails.error();
    auto first = std::find(fails->begin(), fails->end(), true);
    if (first != fails->end()) {
      current_ = std::move(candidates[first - fails->begin()]);
      outcomes_[index]->replaced_by = describe(*current_.storages[index].fill);
      continue;
    }
    for (const StorageFill& fill : fills[index]) outcomes_[index]->refused.push_back(describe(fill));
  }
  return {};
}

std::string shape_list(const std::vector<std::int64_t>& shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

Expected<void> Shrinker::shrink_shapes() {
  if (std::none_of(current_.inputs.begin(), current_.inputs.end(),
                   [](const GraphInput& input) { return input_tensor(input) != nullptr; })) {
    record_.shapes = "kept: the graph has no tensor input";
    return {};
  }
  if (!propose_shapes_) {
    record_.shapes = "kept: no python to trace the graph with symbolic sizes in";
    return {};
  }
  auto proposed = propose_shapes_(current_);
  if (!proposed) {
    record_.shapes = "kept: the sizes could not be proposed: " + proposed.error().message;
    return {};
  }
  if (proposed->proposals.empty()) {
    record_.shapes = "kept: " + proposed->note;
    return {};
  }
  std::vector<GraphDocument> candidates;
  for (const ShapeProposal& proposal : proposed->proposals) {
    GraphDocument document = search::clone_document(current_);
    document.storages = proposal.storages;
    document.inputs = proposal.inputs;
    candidates.push_back(std::move(document));
  }
  auto fails = still_fail(candidates);
  if (!fails) return fails.error();
  auto first = std::find(fails->begin(), fails->end(), true);
  if (first == fails->end()) {
    std::string tried;
    for (const ShapeProposal& proposal : proposed->proposals) tried += (tried.empty() ? "" : "; ") + proposal.sizes;
    record_.shapes = "kept (" + proposed->sizes + "): the failure goes away or changes at every smaller size tried (" +
                     tried + ")";
    return {};
  }
  const ShapeProposal& kept = proposed->proposals[first - fails->begin()];
  std::string resized;
  std::vector<Node*> placeholders = current_.graph.placeholders();
  GraphDocument& smaller = candidates[first - fails->begin()];
  for (std::size_t i = 0; i < current_.inputs.size(); ++i) {
    const TensorMeta* before = input_tensor(current_.inputs[i]);
    const TensorMeta* after = input_tensor(smaller.inputs[i]);
    if (before && after && before->shape != after->shape)
      resized += (resized.empty() ? "" : ", ") + placeholders[i]->name() + " " + shape_list(before->shape) + " -> " +
                 shape_list(after->shape);
  }
  record_.shapes = "smaller (" + proposed->sizes + " -> " + kept.sizes + ", the proposal `" + kept.name + "`): " + resized;
  current_ = std::move(smaller);
  return {};
}

Expected<void> Shrinker::drop_requires_grad() {
  std::vector<GradTensor> tensors;
  std::vector<Node*> placeholders = current_.graph.placeholders();
  for (std::size_t i = 0; i < current_.inputs.size(); ++i)
    if (const TensorMeta* tensor = input_tensor(current_.inputs[i]); tensor && tensor->requires_grad)
      tensors.push_back(GradTensor{"input " + placeholders[i]->name(), i, ""});
  for (const auto& [name, tensor] : current_.constants)
    if (tensor.requires_grad) tensors.push_back(GradTensor{"constant " + name, std::nullopt, name});
  if (tensors.empty()) return {};
  auto without = [this](const std::vector<GradTensor>& dropped) {
    GraphDocument document = search::clone_document(current_);
    for (const GradTensor& tensor : dropped)
      (tensor.input ? *input_tensor(document.inputs[*tensor.input]) : document.constants.at(tensor.constant))
          .requires_grad = false;
    return document;
  };
  // All at once, then each alone; those that may go alone go together when the graph fails so too.
  std::vector<GraphDocument> candidates = one(without(tensors));
  if (tensors.size() > 1)
    for (const GradTensor& tensor : tensors) candidates.push_back(without({tensor}));
  auto fails = still_fail(candidates);
  if (!fails) return fails.error();
  std::vector<GradTensor> dropped;
  if ((*fails)[0]) {
    dropped = tensors;
    current_ = std::move(candidates[0]);
  } else {
    for (std::size_t i = 1; i < candidates.size(); ++i)
      if ((*fails)[i]) dropped.push_back(tensors[i - 1]);
    if (dropped.size() > 1) {
      auto together_fails = still_fail(one(without(dropped)));
      if (!together_fails) return together_fails.error();
      if (!(*together_fails)[0]) dropped.resize(1);
    }
    if (!dropped.empty()) current_ = without(dropped);
  }
  for (const GradTensor& tensor : tensors) {
    bool gone = std::any_of(dropped.begin(), dropped.end(), [&](const GradTensor& d) { return d.name == tensor.name; });
    (gone ? record_.requires_grad_dropped : record_.requires_grad_kept).push_back(tensor.name);
  }
  return {};
}

Expected<ShrinkOutcome> Shrinker::run() {
  Clock::time_point started = Clock::now();
  GraphDocument minimized = search::clone_document(current_);
  record_.before = data_size(current_);
  if (auto shrunk = shrink_shapes(); !shrunk) return shrunk.error();
  outcomes_.resize(current_.storages.size());
  std::vector<std::vector<StorageFill>> fills(current_.storages.size());
  std::vector<std::size_t> left;
  std::vector<StorageViewer> viewers = storage_viewers(current_);
  for (std::size_t i = 0; i < current_.storages.size(); ++i) {
    if (!current_.storages[i].stored() || current_.storages[i].nbytes == 0 || viewers[i].tensor == nullptr) continue;
    auto options = fills_for(i, viewers[i].tensor->dtype);
    if (!options) return options.error();
    if (options->empty()) continue;
    fills[i] = std::move(*options);
    outcomes_[i] = StorageShrink{viewers[i].name, current_.storages[i].nbytes, "", {}};
    left.push_back(i);
  }
  std::stable_sort(left.begin(), left.end(),
                   [this](std::size_t a, std::size_t b) { return current_.storages[a].nbytes > current_.storages[b].nbytes; });
  std::vector<std::size_t> largest_first = left;
  if (left.size() > 1)
    if (auto shrunk = shrink_all_at_once(left, fills); !shrunk) return shrunk.error();
  if (auto shrunk = shrink_one_by_one(left, fills); !shrunk) return shrunk.error();
  if (auto dropped = drop_requires_grad(); !dropped) return dropped.error();

  // Each step was judged on its own; the result is judged once more, as the search re-verifies.
  if (canonical_hash(current_) != canonical_hash(minimized)) {
    auto fails = still_fail(one(search::clone_document(current_)));
    if (!fails) return fails.error();
    if (!(*fails)[0]) {
      record_.error = "the shrunk graph passed when evaluated again (a flaky failure?): the minimized graph is kept";
      current_ = std::move(minimized);
      record_.shapes = "kept as minimized";
      record_.requires_grad_dropped.clear();
      record_.requires_grad_kept.clear();
      largest_first.clear();
    }
  }
  for (std::size_t index : largest_first) record_.storages.push_back(std::move(*outcomes_[index]));
  record_.after = data_size(current_);
  record_.wall_seconds = std::chrono::duration<double>(Clock::now() - started).count();
  return ShrinkOutcome{std::move(current_), std::move(record_)};
}

}  // namespace

Expected<ShrinkOutcome> shrink_inputs(const GraphDocument& document, const ContentStore& store,
                                      search::CandidateEvaluator& evaluator, const ShapeProposer& propose_shapes) {
  return Shrinker(document, store, evaluator, propose_shapes).run();
}

}  // namespace minifyd::shrink
