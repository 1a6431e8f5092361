// Splits a byte stream into JSON lines with a length cap: the framing of every pipe and socket.
// An over-long line is reported once and skipped up to its newline, so one bad peer message
// never costs unbounded memory and never desynchronises the stream.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace minifyd::protocol {

inline constexpr std::size_t default_max_line_bytes = 16 * 1024 * 1024;

struct Line {
  std::string text;        // without the newline; empty when oversized
  bool oversized = false;  // the line exceeded the cap and was dropped
  std::size_t dropped_bytes = 0;
};

// Not thread-safe; one per stream.
class LineBuffer {
 public:
  explicit LineBuffer(std::size_t max_line_bytes = default_max_line_bytes) : max_(max_line_bytes) {}

  // Appends bytes read from the stream.
  void feed(std::string_view bytes);
  // The next complete line, or nullopt until more bytes arrive.
  std::optional<Line> next();
  // Bytes of an unfinished line (at end of stream these are a truncated message).
  std::size_t pending_bytes() const { return buffer_.size() - start_ + skipped_; }

 private:
  std::size_t max_;
  std::string buffer_;
  std::size_t start_ = 0;     // first unconsumed byte of buffer_
  bool skipping_ = false;     // inside an oversized line, discarding up to its newline
  std::size_t skipped_ = 0;   // bytes discarded so far of that line
};

}  // namespace minifyd::protocol
