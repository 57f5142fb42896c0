"""A hosted program's stderr as its owner reads it (`referee.match.stderr`): whatever bytes
the program writes, in whatever chunks, and wherever its start and end are cut, a line
that starts as a note (`[`) is one the sandbox or the referee wrote."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from referee.match.stderr import StderrRecord, within

NOTE = "the program exited"
# what a program may write to pass a line of its own for a note: line ends of every kind,
# terminal escapes, a note's very text, bytes that are not UTF-8
PIECES = [b"\n", b"\r", b"\r\n", b"\x0b", b"\x0c", b"\x1c", b"\x1d", b"\x1e", b"\x85",
          "\x85".encode(), "\u2028".encode(), "\u2029".encode(), b"\x1b[2K", b"\x1b[1A",
          "\u202e".encode(), b"\xff", b"\xe2\x80", b"[", b"x" * 7, b"| ",
          f"[sandbox 00:00:00] {NOTE}".encode(), b"[referee] ... 1 bytes left out ..."]
LEFT_OUT = re.compile(r"\[(sandbox|referee)\] \.\.\. \d+ bytes (of stderr )?left out \.\.\.")
writes = st.lists(st.one_of(st.none(), st.lists(st.sampled_from(PIECES), max_size=12)
                            .map(b"".join)), max_size=20)  # None: a note of the sandbox


def recorded(chunks: list[bytes | None], kept_bytes: int) -> tuple[StderrRecord, int]:
    record = StderrRecord(kept_bytes)
    for chunk in chunks:
        if chunk is None:
            record.note(NOTE)
        else:
            record.add(chunk)
    return record, chunks.count(None)


def unmarked(text: str) -> list[str]:
    """The lines that are neither a note of the sandbox, a line saying what was left out,
    nor a line the program wrote (`| `)."""
    return [line for line in text.splitlines() if not (
        re.fullmatch(rf"\[sandbox \d\d:\d\d:\d\d\] {NOTE}", line) or LEFT_OUT.fullmatch(line)
        or line.startswith("| "))]


@given(writes, st.integers(2, 200))
def test_every_line_is_a_note_or_marked_as_the_programs(chunks, kept_bytes):
    record, notes = recorded(chunks, kept_bytes)
    text = record.text()
    assert unmarked(text) == []
    assert sum(line.startswith("[") and line.endswith(NOTE) for line in text.splitlines()) == notes
    assert len(record.head) + len(record.tail) <= kept_bytes


@given(writes, st.integers(0, 400))
def test_a_cut_is_at_line_ends(chunks, cap):
    text = recorded(chunks, 200)[0].text().encode()
    cut = within(text, cap)
    assert unmarked(cut.decode()) == []
    assert cut == text if len(text) <= cap else len(cut) <= cap + 60


def test_the_start_and_the_end_are_kept_and_what_is_left_out_is_said():
    record = StderrRecord(8)
    record.note("started")
    record.add(b"abcdefgh\n")
    record.note("crash")
    record.add(b"ijkl\n")
    started, crash = (note for _, note in record.notes)
    assert record.text().splitlines() == [
        started, "| abcd", "[sandbox] ... 5 bytes of stderr left out ...", crash,
        "[sandbox] ... 1 bytes of stderr left out ...", "| jkl"]
