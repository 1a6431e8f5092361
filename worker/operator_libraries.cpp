// Loading operator libraries through their checked descriptors.
#include "worker/operator_libraries.h"

#include <dlfcn.h>

#include <exception>
#include <string>

namespace minifyd::worker {
namespace {

std::string names_of(const std::vector<OperatorLibrary>& libraries) {
  if (libraries.empty()) return "none";
  std::string names;
  for (const OperatorLibrary& library : libraries)
    names += (names.empty() ? "" : ", ") + library.name_space + "=" + library.path;
  return names;
}

// dlopen of the checked file by its descriptor: its static initialisers (TORCH_LIBRARY) register the
// operators. A registration that throws (a namespace PyTorch already has) is an error, not the end of
// the worker.
Expected<void> load_checked(const OperatorLibrary& library, const CheckedLibraryFile& checked) {
  auto failed = [&](const std::string& why) {
    return make_error(ErrorKind::invalid_input, "operator library " + library.path + " (--op-library " +
                                                    library.name_space + "): cannot load: " + why);
  };
  void* handle = nullptr;
  try {
    // RTLD_NOW: an unresolved symbol is an error here, not a crash in a query. Never closed: the
    // dispatcher keeps pointers into it for as long as this process lives.
    handle = ::dlopen(descriptor_path(checked.file.fd).c_str(), RTLD_NOW | RTLD_LOCAL);
  } catch (const std::exception& error) {
    return failed(error.what());
  } catch (...) {
    return failed("its initialisation threw");
  }
  if (handle == nullptr) {
    const char* text = ::dlerror();
    return failed(text ? text : "no error text from dlerror");
  }
  return {};
}

}  // namespace

Expected<void> OperatorLibraries::require(const std::vector<OperatorLibrary>& libraries) {
  if (loaded_) {
    if (*loaded_ != libraries)
      return make_error(ErrorKind::invalid_input,
                        "this worker process loaded other operator libraries (" + names_of(*loaded_) +
                            ") than the request names (" + names_of(libraries) + "): it serves no other job");
    if (failure_) return *failure_;
    return {};
  }
  if (libraries.empty()) return {};
  // Every file checked before any loads: a refused one leaves this process as it was.
  std::vector<CheckedLibraryFile> checked;
  for (const OperatorLibrary& library : libraries) {
    auto opened = open_operator_library(library.path, library.sha256);
    if (!opened) return opened.error();
    checked.push_back(std::move(*opened));
  }
  loaded_ = libraries;
  for (std::size_t i = 0; i < libraries.size(); ++i)
    if (auto loaded = load_checked(libraries[i], checked[i]); !loaded) {
      failure_ = loaded.error();
      return loaded;
    }
  return {};
}

}  // namespace minifyd::worker
