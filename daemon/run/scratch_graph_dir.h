// A graph directory for a Python helper of ours (the plain check, the shape proposals): graph.json of
// a document in a fresh temporary directory, its store/ a link to the run's store, so no blob is copied.
#pragma once

#include <filesystem>
#include <string>

#include "common/expected.h"
#include "common/graph_document.h"

namespace minifyd::run {

// Removes the directory (not the store it links to) when destroyed.
class ScratchGraphDir {
 public:
  static Expected<ScratchGraphDir> write(const GraphDocument& document, const std::filesystem::path& store,
                                         const std::string& prefix);
  ScratchGraphDir(ScratchGraphDir&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }
  ScratchGraphDir& operator=(ScratchGraphDir&&) = delete;
  ScratchGraphDir(const ScratchGraphDir&) = delete;
  ~ScratchGraphDir();

  const std::filesystem::path& path() const { return path_; }

 private:
  explicit ScratchGraphDir(std::filesystem::path path) : path_(std::move(path)) {}
  std::filesystem::path path_;
};

}  // namespace minifyd::run
