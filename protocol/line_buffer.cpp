// Line splitting with a cap.
#include "protocol/line_buffer.h"

namespace minifyd::protocol {

void LineBuffer::feed(std::string_view bytes) {
  if (start_ > 0 && start_ == buffer_.size()) {
    buffer_.clear();
    start_ = 0;
  }
  buffer_.append(bytes);
}

std::optional<Line> LineBuffer::next() {
  std::size_t newline = buffer_.find('\n', start_);
  if (skipping_) {
    if (newline == std::string::npos) {
      skipped_ += buffer_.size() - start_;
      buffer_.clear();
      start_ = 0;
      return std::nullopt;
    }
    Line dropped{{}, true, skipped_ + (newline - start_)};
    start_ = newline + 1;
    skipping_ = false;
    skipped_ = 0;
    return dropped;
  }
  if (newline == std::string::npos) {
    if (buffer_.size() - start_ > max_) {
      // Too long already: stop buffering and discard through the next newline.
      skipping_ = true;
      skipped_ = buffer_.size() - start_;
      buffer_.clear();
      start_ = 0;
    }
    return std::nullopt;
  }
  std::size_t length = newline - start_;
  if (length > max_) {
    Line dropped{{}, true, length};
    start_ = newline + 1;
    return dropped;
  }
  Line line{buffer_.substr(start_, length), false, 0};
  start_ = newline + 1;
  // Compact once the consumed prefix dominates, keeping feed() amortised linear.
  if (start_ > (1 << 16) && start_ * 2 > buffer_.size()) {
    buffer_.erase(0, start_);
    start_ = 0;
  }
  return line;
}

}  // namespace minifyd::protocol
