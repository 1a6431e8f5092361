# Lines of a byte stream with a length cap, as protocol/line_buffer.h: an over-long line is reported
# once (its length) and skipped through its newline, so a bad peer never costs unbounded memory. And
# the one way a line is written: whole, however many writes the pipe takes.
import os


class LineBuffer:
    def __init__(self, max_line_bytes):
        self.max, self.pending, self.dropping = max_line_bytes, bytearray(), 0

    def feed(self, data):
        """(line, 0) for each complete line in data, (None, n) for a dropped line of n bytes."""
        found = []
        while data:
            newline = data.find(b"\n")
            chunk, data = (data, b"") if newline < 0 else (data[:newline], data[newline + 1:])
            if self.dropping:
                self.dropping += len(chunk)
            elif len(self.pending) + len(chunk) > self.max:
                self.dropping = len(self.pending) + len(chunk)
                self.pending.clear()
            else:
                self.pending += chunk
            if newline < 0:
                break
            if self.dropping:
                found.append((None, self.dropping))
                self.dropping = 0
            else:
                found.append((bytes(self.pending), 0))
                self.pending.clear()
        return found


def read_lines(fd, max_line_bytes):
    """(line, dropped) from a blocking descriptor until its end."""
    lines = LineBuffer(max_line_bytes)
    while True:
        data = os.read(fd, 1 << 16)
        if not data:
            return
        yield from lines.feed(data)


def write_line(fd, line):
    """line (str or bytes) and its newline, whole."""
    data = (line if isinstance(line, bytes) else line.encode()) + b"\n"
    while data:
        data = data[os.write(fd, data):]
