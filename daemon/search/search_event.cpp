// The search's events to the log and the observer.
#include "daemon/search/search_event.h"

#include "common/log.h"

namespace minifyd::search {

void ObserverSink::emit(SearchEvent event) {
  if (event.warning) {
    log::warn(event.log_line);
    if (observer_ != nullptr) observer_->on_not_reproduced(event.progress);
    return;
  }
  if (!event.accepted) {
    if (observer_ != nullptr) observer_->on_progress(event.progress);
    return;
  }
  log::info(event.log_line);
  if (observer_ != nullptr) observer_->on_accepted(*event.accepted, event.progress);
}

}  // namespace minifyd::search
