// A scratch directory that lives as long as its owner.
#pragma once

#include <filesystem>
#include <string>

#include "common/expected.h"

namespace minifyd {

// A fresh empty directory under the system's temporary directory, removed with this object.
class TemporaryDirectory {
 public:
  static Expected<TemporaryDirectory> create(const std::string& prefix);
  TemporaryDirectory(TemporaryDirectory&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }
  TemporaryDirectory(const TemporaryDirectory&) = delete;
  TemporaryDirectory& operator=(const TemporaryDirectory&) = delete;
  TemporaryDirectory& operator=(TemporaryDirectory&&) = delete;
  ~TemporaryDirectory();
  const std::filesystem::path& path() const { return path_; }

 private:
  explicit TemporaryDirectory(std::filesystem::path path) : path_(std::move(path)) {}
  std::filesystem::path path_;
};

}  // namespace minifyd
