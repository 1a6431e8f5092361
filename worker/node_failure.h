// Why a graph or one of its nodes did not run: the failure value of the eager interpreter
// (eager_interpreter.h) and of every backend that binds arguments and lowers values itself.
#pragma once

#include <string>

namespace minifyd::worker {

enum class FailureKind {
  invalid_graph,     // no output node, or a node the interpreter cannot run as written
  unknown_operator,  // the dispatcher has no such operator overload
  bad_argument,      // an argument does not bind to the schema: type, name, count, missing
  bad_input,         // run() was given inputs or constants that do not match the graph
  exception,         // the kernel (or the node callback) threw
};

const char* to_string(FailureKind kind);

struct NodeFailure {
  FailureKind kind = FailureKind::exception;
  std::string node;            // the node's name; empty for a failure of the graph as a whole
  std::string op;              // the node's target, such as "aten::mm"
  std::string argument;        // the schema argument at fault, where there is one
  std::string exception_type;  // for exceptions: "c10::Error", "c10::IndexError", "std::bad_alloc"
  std::string message;         // for exceptions, the message without the C++ backtrace

  std::string to_string() const;
};

}  // namespace minifyd::worker
