// LRU cache of verified blobs, per device.
#include "worker/blob_cache.h"

#include "worker/blob_bytes.h"

namespace minifyd::worker {

Expected<at::Tensor> BlobCache::read(const ContentStore& store, const std::string& hash, std::uint64_t nbytes,
                                     at::Device device, const FileIdentity* vouched) {
  std::string key = hash + "@" + device.str();
  if (auto found = index_.find(key); found != index_.end()) {
    order_.splice(order_.begin(), order_, found->second);
    return found->second->bytes;
  }
  auto loaded = read_blob_bytes(store, hash, nbytes, vouched);
  if (!loaded) return loaded.error();
  at::Tensor bytes = device == loaded->device() ? std::move(*loaded) : loaded->to(device);
  if (nbytes <= budget_) {
    while (used_ + nbytes > budget_ && !order_.empty()) {
      used_ -= static_cast<std::uint64_t>(order_.back().bytes.numel());
      index_.erase(order_.back().key);
      order_.pop_back();
    }
    order_.push_front(Entry{key, bytes});
    index_[key] = order_.begin();
    used_ += nbytes;
  }
  return bytes;
}

}  // namespace minifyd::worker
