// Loading backend plugins: dlopen, the ABI check, and wrappers that keep the library loaded for as
// long as any object it created lives.
#include "worker/backends/plugin_backend.h"

#include <dlfcn.h>

#include <exception>
#include <typeinfo>
#include <utility>

#include <c10/util/Exception.h>
#include <c10/util/Type.h>

#include "protocol/verdict.h"

namespace minifyd::worker {
namespace {

// One dlopen handle, closed when its last owner (the backend or a compiled graph) goes away.
class Library {
 public:
  explicit Library(void* handle) : handle_(handle) {}
  ~Library() { dlclose(handle_); }
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;

  void* handle() const { return handle_; }

 private:
  void* handle_;
};

std::string last_dlerror() {
  const char* text = dlerror();
  return text ? text : "no error text from dlerror";
}

// The interface promises that no exception escapes a plugin; one that breaks the promise still
// gets a verdict, as a kernel's exception does, instead of unwinding through the worker. Call
// only from a catch block.
NodeFailure current_exception_failure() {
  NodeFailure failure;
  failure.kind = FailureKind::exception;
  try {
    throw;
  } catch (const c10::Error& error) {
    failure.exception_type = c10::demangle(typeid(error).name());
    failure.message = error.what_without_backtrace();  // the backtrace differs between runs
  } catch (const std::exception& error) {
    failure.exception_type = c10::demangle(typeid(error).name());
    failure.message = error.what();
  } catch (...) {
    failure.exception_type = protocol::unknown_exception_type;
    failure.message = "an exception not derived from std::exception";
  }
  return failure;
}

class PluginCompiledGraph : public CompiledGraph {
 public:
  PluginCompiledGraph(std::shared_ptr<Library> library, std::unique_ptr<CompiledGraph> compiled)
      : library_(std::move(library)), compiled_(std::move(compiled)) {}

  EagerResult run(const std::vector<c10::IValue>& inputs) override {
    try {
      return compiled_->run(inputs);
    } catch (...) {
      return {c10::IValue(), current_exception_failure()};
    }
  }

 private:
  // Declared before the plugin's object so that it is destroyed after it: the object's destructor
  // is the plugin's code.
  std::shared_ptr<Library> library_;
  std::unique_ptr<CompiledGraph> compiled_;
};

class PluginBackend : public Backend {
 public:
  PluginBackend(std::shared_ptr<Library> library, std::unique_ptr<Backend> backend)
      : library_(std::move(library)), backend_(std::move(backend)) {}

  std::string name() const override { return backend_->name(); }

  CompileResult compile(const Graph& graph, const ConstantMap& constants, const BackendContext& context) override {
    CompileResult result;
    try {
      result = backend_->compile(graph, constants, context);
    } catch (...) {
      return {nullptr, current_exception_failure()};
    }
    if (result.failure) return result;
    if (!result.compiled) {
      NodeFailure failure;
      failure.kind = FailureKind::invalid_graph;
      failure.message = "the plugin's compile() returned neither a compiled graph nor a failure";
      return {nullptr, std::move(failure)};
    }
    return {std::make_unique<PluginCompiledGraph>(library_, std::move(result.compiled)), std::nullopt};
  }

 private:
  std::shared_ptr<Library> library_;  // before backend_, for the same reason as above
  std::unique_ptr<Backend> backend_;
};

using AbiFunction = int (*)();
using CreateFunction = Backend* (*)(const BackendOptions*, std::string*);

}  // namespace

Expected<std::unique_ptr<Backend>> load_plugin_backend(const std::string& path, const BackendOptions& options) {
  auto failed = [&](ErrorKind kind, const std::string& what) {
    return make_error(kind, "backend plugin '" + path + "': " + what);
  };
  // RTLD_NOW: an unresolved symbol (a plugin built against another minify-worker) is an error
  // here, not a crash in the middle of a query. RTLD_LOCAL: two plugins never see each other.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) return failed(ErrorKind::invalid_input, "cannot load: " + last_dlerror());
  auto library = std::make_shared<Library>(handle);

  auto abi = reinterpret_cast<AbiFunction>(dlsym(handle, "minifyd_backend_abi"));
  if (!abi) return failed(ErrorKind::invalid_input, "no minifyd_backend_abi: " + last_dlerror());
  auto create = reinterpret_cast<CreateFunction>(dlsym(handle, "minifyd_create_backend"));
  if (!create) return failed(ErrorKind::invalid_input, "no minifyd_create_backend: " + last_dlerror());

  int version = abi();
  if (version != minifyd_backend_abi_version)
    return failed(ErrorKind::unsupported,
                  "built for backend ABI version " + std::to_string(version) + ", but this worker has version " +
                      std::to_string(minifyd_backend_abi_version) + "; rebuild it against this worker's backend.h");

  std::string error;
  Backend* created = nullptr;
  try {
    created = create(&options, &error);
  } catch (...) {
    NodeFailure thrown = current_exception_failure();
    return failed(ErrorKind::invalid_input, "minifyd_create_backend threw " + thrown.exception_type + ": " + thrown.message);
  }
  if (!created)
    return failed(ErrorKind::invalid_input,
                  error.empty() ? "minifyd_create_backend returned no backend and no error" : error);
  return std::unique_ptr<Backend>(std::make_unique<PluginBackend>(std::move(library), std::unique_ptr<Backend>(created)));
}

}  // namespace minifyd::worker
