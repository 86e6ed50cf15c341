"""The frames the engine and its in-process scheduler exchange over a pair of pipes (``in_process``).

One byte saying what follows, eight bytes of length, the bytes. A leaf: the
engine reads and writes them without importing pybatsim.
"""

import os
import struct

MESSAGE, READY, LOAD_ERROR, ANSWER, FAILED = b"M", b"R", b"L", b"A", b"F"
HEADER = struct.Struct("<cQ")
CHUNK = 1 << 16


class PeerGone(Exception):
    """The other end closed its pipe (it ended, or died)."""


class Frames:
    """One end of the pair of pipes: `read` and `write` whole frames."""

    def __init__(self, read_fd, write_fd):
        self.read_fd = read_fd
        self.write_fd = write_fd
        self.buffer = b""

    def write(self, kind, payload=b""):
        data = HEADER.pack(kind, len(payload)) + payload
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self.write_fd, view):]
        except BrokenPipeError:
            raise PeerGone() from None

    def read(self, wait=None):
        """The next frame (kind, payload); `wait()` is called before each read that would block, to wait for
        the pipe to hold something (or raise). PeerGone at the end of the pipe."""
        buffer = self.buffer
        while len(buffer) < HEADER.size:
            buffer += self._chunk(wait)
        kind, size = HEADER.unpack_from(buffer)
        end = HEADER.size + size
        if len(buffer) < end:
            parts = [buffer]
            have = len(buffer)
            while have < end:
                chunk = self._chunk(wait, end - have)
                parts.append(chunk)
                have += len(chunk)
            buffer = b"".join(parts)
        self.buffer = buffer[end:]
        return kind, buffer[HEADER.size:end]

    def _chunk(self, wait, size=CHUNK):
        if wait is not None:
            wait()
        chunk = os.read(self.read_fd, max(size, CHUNK))
        if not chunk:
            raise PeerGone()
        return chunk

    def close(self):
        for fd in (self.read_fd, self.write_fd):
            try:
                os.close(fd)
            except OSError:
                pass
