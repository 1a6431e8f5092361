// The result's store phase.
#include "daemon/run/phases/result_store_phase.h"

namespace minifyd::run {

bool result_store_asked(const PhaseContext& context) { return context.minimized; }

Expected<void> keep_only_result(PhaseContext& context) {
  const RunPlace& place = context.place;
  const ContentStore& store = place.store;
  if (auto rooted = store.write_root(place.result_root(), context.checkpoint.state.document.blob_hashes()); !rooted)
    return rooted.error();
  if (!place.drops_roots) return {};
  for (const std::string& root : {place.original_root(), place.intermediates_root(), place.shrink_root()})
    if (auto removed = store.remove_root(root); !removed) return removed.error();
  auto collected = store.gc();
  if (!collected) return collected.error();
  return {};
}

}  // namespace minifyd::run
