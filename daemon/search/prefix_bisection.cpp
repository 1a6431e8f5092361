// The bisection over cut points, then the failing node alone.
#include "daemon/search/prefix_bisection.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "daemon/search/computations_alone.h"
#include "daemon/search/strategies/truncate_suffix.h"

namespace minifyd::search {
namespace {

// Indices into `cuts`, in order, splitting the unknown range [lo, hi) into `count` + 1 parts as
// evenly as whole indices allow.
std::vector<std::size_t> probe_indices(std::size_t lo, std::size_t hi, std::size_t count) {
  std::size_t unknown = hi - lo;
  count = std::min(count, unknown);
  std::vector<std::size_t> probes;
  for (std::size_t i = 1; i <= count; ++i) probes.push_back(lo + (i * unknown) / (count + 1));
  return probes;
}

// `node` of `state` alone on loads of its inputs (the values of `reading`'s nodes, when given), as the
// step failing_node_step, when accepted.
std::optional<SearchState> try_node_alone(SearchRunner& runner, const SearchState& state, const Node& node,
                                          const SearchState* reading = nullptr) {
  if (node.op() != OpCode::call_function) return std::nullopt;
  return first_failing_computation(runner, state, {node.name()}, reading);
}

}  // namespace

SearchState bisect_failing_prefix(SearchRunner& runner, SearchState original) {
  std::vector<Node*> nodes = original.document.graph.nodes();
  std::vector<std::size_t> cuts;  // the positions of the cut points
  for (std::size_t i = 0; i < nodes.size(); ++i)
    if (is_cut_point(original, *nodes[i])) cuts.push_back(i);
  if (cuts.size() < min_cut_points_to_bisect) return original;

  // Cuts before `lo` are known to pass; the one at `hi` fails (at cuts.size(): only the original is
  // known to), and `shortest` is it.
  std::size_t lo = 0;
  std::size_t hi = cuts.size();
  std::optional<SearchState> shortest;
  while (lo < hi) {
    std::vector<std::size_t> probes = probe_indices(lo, hi, runner.parallelism());
    std::vector<std::size_t> sizes;  // of each probe's graph, growing with its cut: which one failed
    std::optional<SearchState> failed =
        runner.first_failing(failing_prefix_step, original, hi - lo, [&](const CandidateSink& offer) {
          for (std::size_t index : probes) {
            SearchState cut = truncated_at(original, cuts[index]);
            sizes.push_back(cut.document.graph.size());
            if (!offer(std::move(cut))) return;
          }
        });
    if (runner.stopped()) return original;
    if (!failed) {
      lo = probes.back() + 1;
      continue;
    }
    auto at = std::find(sizes.begin(), sizes.end(), failed->document.graph.size());
    if (at == sizes.end()) return original;  // not one of the probes: nothing to narrow by
    auto probe = static_cast<std::size_t>(at - sizes.begin());
    hi = probes.at(probe);
    if (probe > 0) lo = probes[probe - 1] + 1;
    shortest = std::move(*failed);
  }
  if (!shortest) return try_last_node_alone(runner, std::move(original));
  // Both steps from here read the failing prefix's values alone (the node's inputs; the prefix none):
  // a run that has not propagated its original yet propagates the prefix only.
  SearchState prefix = clone_state(*shortest);
  if (auto alone = try_node_alone(runner, original, *nodes[cuts[hi]], &prefix)) return std::move(*alone);
  if (runner.stopped()) return original;
  auto kept = runner.run_proposals(
      failing_prefix_step, original, 1, [&](const CandidateSink& offer) { offer(std::move(*shortest)); }, &prefix);
  return kept ? std::move(*kept) : std::move(original);
}

SearchState try_last_node_alone(SearchRunner& runner, SearchState state) {
  const Node* last = nullptr;
  for (const Node* node : state.document.graph.nodes())
    if (is_cut_point(state, *node)) last = node;
  if (last == nullptr) return state;
  auto alone = try_node_alone(runner, state, *last);
  return alone ? std::move(*alone) : std::move(state);
}

}  // namespace minifyd::search
