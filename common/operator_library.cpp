// Operator libraries: parsing NS=PATH, the scope they add, and the checked open.
#include "common/operator_library.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "common/sha256.h"

namespace minifyd {
namespace {

std::string octal_mode(mode_t mode) {
  char octal[8];
  std::snprintf(octal, sizeof octal, "%03o", static_cast<unsigned>(mode & 07777));
  return octal;
}

}  // namespace

Expected<OperatorLibrary> parse_operator_library(std::string_view text) {
  std::size_t equals = text.find('=');
  if (equals == std::string_view::npos || equals + 1 == text.size())
    return make_error(ErrorKind::invalid_input,
                      "--op-library " + quoted_for_message(text) + ": expected NS=PATH.so (the operators' namespace and the library)");
  OperatorLibrary library;
  library.name_space = std::string(text.substr(0, equals));
  if (auto refused = library_namespace_refusal(library.name_space))
    return make_error(ErrorKind::invalid_input, "--op-library " + quoted_for_message(text) + ": " + *refused);
  std::error_code error;
  std::filesystem::path absolute = std::filesystem::absolute(std::filesystem::path(text.substr(equals + 1)), error);
  if (error) return make_error(ErrorKind::invalid_input, "--op-library " + quoted_for_message(text) + ": " + error.message());
  library.path = absolute.lexically_normal().string();
  return library;
}

Expected<std::vector<OperatorLibrary>> recorded_operator_libraries(const std::vector<std::string>& arguments) {
  std::vector<OperatorLibrary> libraries;
  for (const std::string& argument : arguments) {
    auto library = parse_operator_library(argument);
    if (!library) return library.error();
    for (const OperatorLibrary& earlier : libraries)
      if (earlier.name_space == library->name_space)
        return make_error(ErrorKind::invalid_input, "--op-library: the namespace '" + library->name_space +
                                                        "' is named twice (one library per namespace)");
    auto checked = open_operator_library(library->path, std::nullopt);
    if (!checked) return checked.error().with_context("--op-library " + library->name_space);
    library->sha256 = std::move(checked->sha256);
    libraries.push_back(std::move(*library));
  }
  return libraries;
}

OperatorScope operator_scope(const std::vector<OperatorLibrary>& libraries) {
  OperatorScope scope;
  for (const OperatorLibrary& library : libraries) scope.namespaces.insert(library.name_space);
  return scope;
}

Expected<CheckedLibraryFile> open_operator_library(const std::filesystem::path& path,
                                                   std::optional<std::string_view> expected_sha256) {
  auto refuse = [&](const std::string& why) {
    return make_error(ErrorKind::invalid_input, "operator library " + path.string() + ": " + why);
  };
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ELOOP) return refuse("is a symbolic link, which is not followed (name the file itself)");
    return errno_error("operator library " + path.string(), errno);
  }
  OpenFile file(fd);
  struct stat info {};
  if (::fstat(file.fd, &info) != 0) return errno_error("operator library " + path.string(), errno);
  if (!S_ISREG(info.st_mode)) return refuse("is not a regular file");
  if (info.st_uid != ::getuid())
    return refuse("belongs to uid " + std::to_string(info.st_uid) + ", not to this user (uid " +
                  std::to_string(::getuid()) + "): only your own library is loaded");
  if ((info.st_mode & (S_IWGRP | S_IWOTH)) != 0)
    return refuse("may be written by its group or by others (mode " + octal_mode(info.st_mode) + "): chmod go-w it");
  Sha256 hasher;
  char buffer[1 << 16];
  for (;;) {
    ssize_t got = ::read(file.fd, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return errno_error("operator library " + path.string(), errno);
    if (got == 0) break;
    hasher.update(buffer, static_cast<std::size_t>(got));
  }
  std::string sha256 = hasher.finish_hex();
  if (expected_sha256 && sha256 != *expected_sha256)
    return refuse("its SHA-256 is " + sha256 + ", not the " + std::string(*expected_sha256) +
                  " recorded with the job: it changed since, and is not loaded");
  return CheckedLibraryFile{std::move(file), std::move(sha256)};
}

std::string descriptor_path(int fd) { return "/proc/self/fd/" + std::to_string(fd); }

}  // namespace minifyd
