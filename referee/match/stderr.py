"""A hosted program's stderr as its owner reads it (issue 29), in which the program can
neither erase nor forge the sandbox's notes.

The program's stderr is a pipe the worker reads (never a file of the host it could truncate
or reopen); the worker keeps the start and the end of what it wrote (`StderrRecord`), and
the sandbox's notes (start, exit, a limit hit) apart from it, each where it happened among
the program's bytes. The text shown (`StderrRecord.text`) has two kinds of lines:

- a note of the sandbox (or of the referee) starts with `[`;
- every line the program wrote starts with `| `, and the characters in it that a reader
  could take for the end of a line or that move a terminal's cursor (control characters
  but tab, U+2028 and U+2029, bidirectional overrides) are written as Python escapes
  (`\\r`, `\\x1b`, `\\u2028`), as are bytes that are not UTF-8 (`\\xff`).
"""

from __future__ import annotations

import re
import time

KEPT_BYTES = 64 << 10
"""The most of a seat's stderr text kept per match: its start, and its end."""
PROGRAM_BYTES = KEPT_BYTES // 2
"""Kept of what one program wrote (the first and the last half): its text, lines marked and
usual output escaped, fits in `KEPT_BYTES` with room for a resumed match's next program."""
PROGRAM_LINE = "| "
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


class StderrRecord:
    """What a program wrote on stderr (the first and the last `kept_bytes // 2` bytes) and
    the sandbox's notes, each at the count of bytes the program had written before it."""

    def __init__(self, kept_bytes: int = PROGRAM_BYTES):
        self.half = kept_bytes // 2
        self.head = bytearray()
        self.tail = bytearray()
        self.written = 0
        self.notes: list[tuple[int, str]] = []

    def add(self, chunk: bytes) -> None:
        """Bytes the program wrote, after those before."""
        room = self.half - len(self.head)
        self.head += chunk[:room]
        self.tail += chunk[room:]
        del self.tail[:max(0, len(self.tail) - self.half)]
        self.written += len(chunk)

    def note(self, text: str) -> None:
        """A note of the sandbox, after what the program wrote so far."""
        self.notes.append((self.written, f"[sandbox {time.strftime('%H:%M:%S')}] {text}"))

    def text(self) -> str:
        """The notes and the program's lines, in order (see the module)."""
        lines: list[str] = []
        shown = 0
        for at, note in self.notes:
            lines += self._program_lines(shown, at)
            lines.append(note)
            shown = at
        lines += self._program_lines(shown, self.written)
        return "".join(f"{line}\n" for line in lines)

    def _program_lines(self, start: int, end: int) -> list[str]:
        """The program's lines from byte `start` to `end`, as far as they are kept, and a
        note of the bytes left out between them."""
        tail_start = self.written - len(self.tail)
        lines = program_lines(bytes(self.head[start:end]))
        left_out = min(end, tail_start) - max(start, len(self.head))
        if left_out > 0:
            lines.append(f"[sandbox] ... {left_out} bytes of stderr left out ...")
        if end > tail_start:
            lines += program_lines(bytes(self.tail[max(start, tail_start) - tail_start:
                                                   end - tail_start]))
        return lines


def program_lines(written: bytes) -> list[str]:
    """Bytes the program wrote, as lines marked and escaped (a last line without its
    newline is a line too)."""
    if not written:
        return []
    return [PROGRAM_LINE + escaped(line) for line in written.removesuffix(b"\n").split(b"\n")]


def escaped(line: bytes) -> str:
    """A line the program wrote, its unsafe characters and its bytes that are not UTF-8
    written as escapes."""
    text = line.decode("utf-8", errors="backslashreplace")
    return UNSAFE.sub(lambda found: found[0].encode("unicode_escape").decode(), text)


def within(text: bytes, cap: int) -> bytes:
    """`text` (a `StderrRecord`'s, or several) cut to about its first and last `cap // 2`
    bytes when it is longer, with a line saying how much was left out. A note is kept whole
    or not at all; a program's line cut in two keeps its start, and its end is marked as
    the program's again (unmarked, it would read as a line of its own, maybe as a note)."""
    if len(text) <= cap:
        return text
    head_end = _character_start(text, cap // 2)
    tail_start = _character_start(text, len(text) - cap // 2)
    head, tail = text[:head_end], text[tail_start:]
    line_start = head.rfind(b"\n") + 1
    if line_start < head_end:  # the head ends within a line
        head = head + b"\n" if _is_programs(head, line_start) else head[:line_start]
    line_start = text.rfind(b"\n", 0, tail_start) + 1
    if line_start < tail_start:  # the tail starts within a line
        if _is_programs(text, line_start):
            tail = PROGRAM_LINE.encode() + tail
        else:
            tail = tail[tail.find(b"\n") + 1:] if b"\n" in tail else b""
    left_out = tail_start - head_end
    return head + f"[referee] ... {left_out} bytes left out ...\n".encode() + tail


def _is_programs(text: bytes, line_start: int) -> bool:
    return text.startswith(PROGRAM_LINE.encode(), line_start)


def _character_start(text: bytes, position: int) -> int:
    """`position`, or the start of the UTF-8 character it is within."""
    while 0 < position < len(text) and text[position] & 0xC0 == 0x80:
        position -= 1
    return position
