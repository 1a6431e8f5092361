// Line framing: complete lines, split reads, oversized lines skipped without losing sync.
#include <catch2/catch.hpp>

#include "protocol/line_buffer.h"

using minifyd::protocol::LineBuffer;

TEST_CASE("lines split across reads are joined", "[line_buffer]") {
  LineBuffer buffer(100);
  buffer.feed("{\"a\":");
  CHECK_FALSE(buffer.next().has_value());
  buffer.feed("1}\n{\"b\":2}\n{\"c\"");
  auto first = buffer.next();
  REQUIRE(first.has_value());
  CHECK(first->text == "{\"a\":1}");
  CHECK(buffer.next()->text == "{\"b\":2}");
  CHECK_FALSE(buffer.next().has_value());
  CHECK(buffer.pending_bytes() == 4);
}

TEST_CASE("an oversized line is reported once and the stream stays in sync", "[line_buffer]") {
  LineBuffer buffer(10);
  buffer.feed(std::string(25, 'x'));
  CHECK_FALSE(buffer.next().has_value());  // dropped as it arrives, nothing buffered
  buffer.feed(std::string(30, 'y'));
  CHECK_FALSE(buffer.next().has_value());
  buffer.feed("zz\nok\n");
  auto dropped = buffer.next();
  REQUIRE(dropped.has_value());
  CHECK(dropped->oversized);
  CHECK(dropped->dropped_bytes == 57);
  auto next = buffer.next();
  REQUIRE(next.has_value());
  CHECK_FALSE(next->oversized);
  CHECK(next->text == "ok");

  buffer.feed(std::string(11, 'q') + "\nfine\n");
  CHECK(buffer.next()->oversized);
  CHECK(buffer.next()->text == "fine");
}
