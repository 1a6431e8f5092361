// The request loop.
#include "worker/server.h"

#include <unistd.h>

#include <cerrno>
#include <exception>
#include <iostream>
#include <optional>
#include <type_traits>
#include <variant>

#include "common/json_view.h"
#include "protocol/line_buffer.h"

namespace minifyd::worker {

bool write_all(int fd, std::string_view bytes) {
  std::size_t written = 0;
  while (written < bytes.size()) {
    ssize_t put = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) return false;
    written += static_cast<std::size_t>(put);
  }
  return true;
}

bool write_line(int fd, const std::string& text) { return write_all(fd, text + "\n"); }

std::string oversized_request_reply(std::size_t dropped_bytes, std::size_t max_line_bytes) {
  return protocol::encode(protocol::WorkerReply(protocol::ErrorReply{
                              0, "request of " + std::to_string(dropped_bytes) + " bytes is over the limit of " +
                                     std::to_string(max_line_bytes)}))
      .dump();
}

bool reports_cuda_error(const protocol::WorkerReply& reply) {
  const protocol::Verdict* failure = protocol::compiled_failure_of(reply);
  return failure != nullptr && failure->kind == protocol::FailureKind::cuda_error;
}

namespace {

// The id of a request that failed to decode, when it has a readable one, so the error reply can
// be matched to it.
std::uint64_t salvage_id(const nlohmann::json& message) {
  if (message.is_object() && message.contains("id") && message["id"].is_number_unsigned())
    return message["id"].get<std::uint64_t>();
  return 0;
}

// Whether `request` names operator libraries.
bool names_op_libraries(const protocol::WorkerRequest& request) {
  return std::visit(
      [](const auto& r) {
        if constexpr (std::is_same_v<std::decay_t<decltype(r)>, protocol::ShutdownRequest> ||
                      std::is_same_v<std::decay_t<decltype(r)>, protocol::CancelRequest>)
          return false;
        else
          return !r.op_libraries.empty();
      },
      request);
}

// Marks `reply` as the last this process sends; false for an error reply, which cannot say so (the
// process then serves on, refusing every request naming other libraries: OperatorLibraries).
bool announce_retirement(protocol::WorkerReply& reply) {
  return std::visit(
      [](auto& r) {
        if constexpr (std::is_same_v<std::decay_t<decltype(r)>, protocol::ErrorReply>) {
          return false;
        } else {
          r.retiring = true;
          return true;
        }
      },
      reply);
}

// Decodes and handles one line; returns the reply line, or nothing for a cancel or a shutdown.
// Sets `shutdown` when asked to stop, and `retire` after a CUDA error, which leaves this process's CUDA context
// unusable, or, serving every job, after a request naming operator libraries.
std::optional<std::string> handle(const std::string& line, RequestHandler& handler, Serving serving, bool& shutdown,
                                  bool& retire) {
  auto json = protocol::parse_worker_request_line(line);
  if (!json) return protocol::encode(protocol::WorkerReply(protocol::ErrorReply{0, json.error().message})).dump();
  auto request = protocol::decode_request(*json);
  if (!request)
    return protocol::encode(protocol::WorkerReply(protocol::ErrorReply{salvage_id(*json), request.error().message})).dump();
  if (std::holds_alternative<protocol::CancelRequest>(*request)) return std::nullopt;
  if (std::holds_alternative<protocol::ShutdownRequest>(*request)) {
    shutdown = true;
    return std::nullopt;
  }
  protocol::WorkerReply reply;
  if (auto* evaluate = std::get_if<protocol::EvaluateRequest>(&*request)) reply = handler.evaluate(*evaluate);
  else if (auto* analyze = std::get_if<protocol::AnalyzeRequest>(&*request)) reply = handler.analyze(*analyze);
  else reply = handler.propagate(std::get<protocol::PropagateRequest>(*request));
  retire = reports_cuda_error(reply);
  if (serving == Serving::every_job && names_op_libraries(*request)) retire = announce_retirement(reply) || retire;
  return protocol::encode(reply).dump();
}

}  // namespace

int serve(int in_fd, int out_fd, RequestHandler& handler, std::size_t max_line_bytes, Serving serving) {
  protocol::LineBuffer lines(max_line_bytes);
  char buffer[1 << 16];
  while (true) {
    ssize_t got = ::read(in_fd, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return got == 0 ? 0 : 1;
    lines.feed(std::string_view(buffer, static_cast<std::size_t>(got)));
    while (auto line = lines.next()) {
      std::optional<std::string> reply;
      bool shutdown = false;
      bool retire = false;
      if (line->oversized) {
        reply = oversized_request_reply(line->dropped_bytes, max_line_bytes);
      } else {
        try {
          reply = handle(line->text, handler, serving, shutdown, retire);
        } catch (const std::exception& e) {  // e.g. bad_alloc building a reply; the worker lives on
          reply = protocol::encode(protocol::WorkerReply(protocol::ErrorReply{0, std::string("internal error: ") + e.what()})).dump();
        }
      }
      if (shutdown) return 0;
      if (reply && !write_line(out_fd, *reply)) return 1;
      if (retire) return exit_retired;
    }
  }
}

}  // namespace minifyd::worker
