// Verified storage bytes kept across requests. Blobs are content-addressed and immutable, so a
// blob read and verified once need not be read again: the search sends the same weights with
// every candidate. The cache hands out its own bytes, not a copy: a run, which may write to its
// inputs and constants in place (batch norm's running statistics, for one), gets copies of them
// (fresh_arguments) and never the cached bytes themselves.
#pragma once

#include <cstdint>
#include <list>
#include <string>
#include <unordered_map>

#include <ATen/ATen.h>

#include "common/content_store.h"
#include "common/expected.h"

namespace minifyd::worker {

// Least recently used blobs are evicted beyond the byte budget. Not thread-safe.
class BlobCache {
 public:
  explicit BlobCache(std::uint64_t budget_bytes) : budget_(budget_bytes) {}

  // A uint8 tensor on `device` holding the blob's nbytes bytes: the cache's own (never to be
  // written), or a fresh one when the blob is over the budget.
  // `vouched`: the identity of the blob's file when the coordinator hashed it (read_blob_bytes).
  Expected<at::Tensor> read(const ContentStore& store, const std::string& hash, std::uint64_t nbytes,
                            at::Device device, const FileIdentity* vouched = nullptr);

  std::uint64_t cached_bytes() const { return used_; }

 private:
  struct Entry {
    std::string key;
    at::Tensor bytes;
  };
  std::uint64_t budget_;
  std::uint64_t used_ = 0;
  std::list<Entry> order_;  // most recently used first
  std::unordered_map<std::string, std::list<Entry>::iterator> index_;
};

}  // namespace minifyd::worker
