// SHA-256 (OpenSSL) for content addressing and canonical hashing; lowercase hex digests.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace minifyd {

// Incremental hasher. Not thread-safe; one per thread.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void update(const void* data, std::size_t size);
  void update(std::string_view text) { update(text.data(), text.size()); }
  // Returns the hex digest; the hasher must not be used afterwards.
  std::string finish_hex();

 private:
  struct Context;
  std::unique_ptr<Context> context_;
};

std::string sha256_hex(const void* data, std::size_t size);

// True for 64 lowercase hex digits, the only spelling of a hash we accept.
bool is_sha256_hex(std::string_view text);

}  // namespace minifyd
