// Recoverable failures as values: Error (a kind plus a message with context) and Expected<T>.
#pragma once

#include <cassert>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

namespace minifyd {

// What went wrong, coarsely, so callers can choose an exit code or a retry without parsing text.
enum class ErrorKind {
  invalid_input,  // a document, request or argument the user gave us is wrong
  io,             // the file system or a pipe failed
  corrupt,        // stored data does not match its hash or format
  not_found,      // a named thing (blob, file, job) does not exist
  unsupported,    // valid, but beyond what this version handles
  no_space,       // the disk is full (ENOSPC, EDQUOT, SQLITE_FULL): worth waiting for room, not a failure
};

const char* to_string(ErrorKind kind);

struct Error {
  ErrorKind kind = ErrorKind::invalid_input;
  std::string message;

  // Returns a copy whose message is "context: message", for adding where the error passed through.
  Error with_context(const std::string& context) const {
    return Error{kind, context + ": " + message};
  }
};

inline Error make_error(ErrorKind kind, std::string message) { return Error{kind, std::move(message)}; }

// Either a T or an Error. Accessing the wrong alternative is a programming error (asserted).
template <class T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : state_(std::in_place_index<0>, std::move(value)) {}
  Expected(Error error) : state_(std::in_place_index<1>, std::move(error)) {}

  bool has_value() const { return state_.index() == 0; }
  explicit operator bool() const { return has_value(); }

  T& value() & { assert(has_value()); return std::get<0>(state_); }
  const T& value() const& { assert(has_value()); return std::get<0>(state_); }
  T&& value() && { assert(has_value()); return std::get<0>(std::move(state_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Error& error() const { assert(!has_value()); return std::get<1>(state_); }

 private:
  std::variant<T, Error> state_;
};

// Success carries nothing.
template <>
class [[nodiscard]] Expected<void> {
 public:
  Expected() = default;
  Expected(Error error) : error_(std::move(error)), failed_(true) {}

  bool has_value() const { return !failed_; }
  explicit operator bool() const { return has_value(); }
  const Error& error() const { assert(failed_); return error_; }

 private:
  Error error_;
  bool failed_ = false;
};

}  // namespace minifyd
