"""Canonical JSON: the bytes that state hashes, hash chains and signatures are made over.

`jcs(value)` is RFC 8785, the JSON Canonicalization Scheme: object keys sorted by their
UTF-16 code units, no whitespace, strings escaped as ECMAScript's `JSON.stringify` does and
numbers written as ECMAScript writes them (3.0 -> `3`, 1e21 -> `1e+21`). A client in any
language that parses a record and writes it again (JavaScript turns 3.0 into 3) gets the
same bytes. RFC 8785 covers the integers a double holds exactly (|n| <= 2**53 - 1); a
larger one (the 64-bit generator state inside an engine state) is written with all its
digits, as JSON itself allows.

`jcs` writes with orjson whenever orjson's bytes are provably the same once its doubles
are rewritten as ECMAScript writes them (ASCII only, no escapes: then keys sort alike and
strings are written alike; integers are written alike): engine states and step records
take that path, at C speed. orjson writes every double with a fraction or a signed
exponent (`3.0`, `0.5`, `1e+21`, `5e-324`) and no integer with either, and a double
written with a fraction other than `.0` and no exponent already has ECMAScript's digits
(both write the shortest that reads back the same double): only an integral double
(`3.0`) or one with an exponent needs rewriting, and a few byte searches find those, or
show there is none (a step's `elapsed_ms` of `20.513` needs nothing);
anything else goes through the exact writer below, which leaves strings and doubles to
the `rfc8785` package.

`sorted_json(value)` is the canonical form of `referee-replay/1` records (orjson, sorted
keys), kept so that those records verify exactly as they always did.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson
import rfc8785

CanonicalizationError = rfc8785.CanonicalizationError

# In orjson's ASCII output without escapes: the bytes of a double that no integer has, a
# number token and its bytes, and what comes before a value.
_DOUBLE_MARKS = (b".", b"+", b"-")
_DOUBLE_MARK = re.compile(rb"[0-9](?:\.|e[+-])")
_NUMBER = re.compile(rb"-?[0-9][0-9.e+-]*")
_DIGITS = frozenset(b"0123456789")
_DIGIT_BYTES = frozenset(bytes([digit]) for digit in _DIGITS)
_NUMBER_BYTES = frozenset(b"0123456789.e+-")
_VALUE_STARTS = frozenset(b":,[")
_E = ord("e")
_NOT_NUMBER = re.compile(rb"[^0-9.e+-]")
_LONGEST = 24  # bytes of the longest number orjson writes (`-1.7976931348623157e+308`)


def sorted_json(value: Any) -> bytes:
    """orjson with sorted keys: the canonical form of `referee-replay/1`."""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def jcs(value: Any) -> bytes:
    """RFC 8785 canonical JSON of a JSON value (integers beyond 2**53 written exactly)."""
    try:
        fast = sorted_json(value)
    except TypeError:  # an integer beyond 64 bits, or a key that is not a string
        return _write(value)
    if not fast.isascii() or b"\\" in fast:
        return _write(value)
    if not _has_double_to_rewrite(fast):
        return fast  # no double ECMAScript writes otherwise: orjson's bytes are RFC 8785's
    return _ecmascript_doubles(fast)


def _has_double_to_rewrite(fast: bytes) -> bool:
    """Whether orjson's bytes (ASCII, no escapes) may hold a double ECMAScript writes
    otherwise: a `.0` after a digit and before no digit (an integral double), or a `+`/`-`
    after a digit's `e`, in a number that starts where a value may (first, or after `:`,
    `,` or `[`), which no number inside a string does unless the string holds such text
    (then the rewriting, exact, finds nothing to change). The marks are single bytes,
    found at C speed; the few found are looked at in Python, each run of number bytes
    once (its other marks share its start), and no further back than a number orjson
    writes: a string of `1.1.1...` (a bot's debug text in a step) costs time linear in its
    length, not quadratic."""
    for mark in _DOUBLE_MARKS:
        at = fast.find(mark, 1)
        while at != -1:
            if mark == b".":
                in_number = fast[at - 1] in _DIGITS
                to_rewrite = in_number and _integral_at(fast, at)
            else:
                in_number = to_rewrite = (at > 1 and fast[at - 1] == _E
                                          and fast[at - 2] in _DIGITS)
            if to_rewrite and _starts_a_value(fast, at):
                return True
            if in_number:  # a number has one `.`: its run's other marks are no number's
                after = _NOT_NUMBER.search(fast, at)
                at = after.start() if after else len(fast)
            at = fast.find(mark, at + 1)
    return False


def _starts_a_value(fast: bytes, at: int) -> bool:
    """Whether the run of number bytes around `at` starts where a value may, no further
    back than the longest number orjson writes."""
    start = at - 1
    while start >= 0 and fast[start] in _NUMBER_BYTES and at - start <= _LONGEST:
        start -= 1
    return at - start <= _LONGEST and (start < 0 or fast[start] in _VALUE_STARTS)


def _integral_at(fast: bytes, at: int) -> bool:
    """Whether the `.` at `at` starts a fraction of `.0` alone (`3.0`, not `3.05`)."""
    return fast[at + 1:at + 2] == b"0" and fast[at + 2:at + 3] not in _DIGIT_BYTES


def _ecmascript_doubles(fast: bytes) -> bytes:
    """orjson's bytes with every double written as ECMAScript writes it (3.0 -> 3). With no
    escapes, every `"` delimits a string: the even pieces between them are outside strings,
    and only those that hold a double are rewritten."""
    pieces = fast.split(b'"')
    for index in range(0, len(pieces), 2):
        if _DOUBLE_MARK.search(pieces[index]):
            pieces[index] = _NUMBER.sub(_ecmascript_number, pieces[index])
    return b'"'.join(pieces)


def _ecmascript_number(token: re.Match) -> bytes:
    """A number token as ECMAScript writes it: an integer as it is; a double orjson wrote
    without an exponent has ECMAScript's digits (both write the shortest that read back
    the same double), but an integral one loses its `.0` (and -0 its sign); any other
    goes through `rfc8785`."""
    text = token.group()
    if not _DOUBLE_MARK.search(text):
        return text
    if b"e" not in text:
        if text.endswith(b".0"):
            text = text[:-2]
            return b"0" if text == b"-0" else text
        return text
    return rfc8785.dumps(float(text))


def _write(value: Any) -> bytes:
    parts: list[bytes] = []
    try:
        _append(value, parts)
    except RecursionError:  # deeper than Python's stack (orjson stops at 255 levels)
        raise CanonicalizationError("a value nested too deeply to write") from None
    return b"".join(parts)


def _append(value: Any, parts: list[bytes]) -> None:
    if value is None or isinstance(value, bool):
        parts.append({None: b"null", True: b"true", False: b"false"}[value])
    elif isinstance(value, int):
        parts.append(str(int(value)).encode())
    elif isinstance(value, str):
        parts.append(_string(value))
    elif isinstance(value, float):
        parts.append(rfc8785.dumps(value))
    elif isinstance(value, list | tuple):
        parts.append(b"[")
        for index, item in enumerate(value):
            if index:
                parts.append(b",")
            _append(item, parts)
        parts.append(b"]")
    elif isinstance(value, dict):
        _append_object(value, parts)
    else:
        raise CanonicalizationError(f"not a JSON value: {type(value).__name__}")


def _append_object(value: dict, parts: list[bytes]) -> None:
    if not all(isinstance(key, str) for key in value):
        raise CanonicalizationError("object keys must be strings")
    parts.append(b"{")
    for index, key in enumerate(sorted(value, key=_utf16_order)):
        if index:
            parts.append(b",")
        parts.append(_string(key))
        parts.append(b":")
        _append(value[key], parts)
    parts.append(b"}")


def _string(text: str) -> bytes:
    """A string as RFC 8785 writes it. The json module's C escaper (`ensure_ascii` off)
    escapes every code point as the RFC does (`tests/match/test_canonical.py` checks them
    all), at C speed, where `rfc8785` takes Python's time per character (~7 ms for a step
    with a bot's longest debug text); a lone surrogate cannot be encoded, and is refused.
    (Not orjson: each small bytes object it answers holds ~4 KB, and a submitted record of
    300,000 short strings took 1.5 GB.)"""
    try:
        return _escaped(text).encode()
    except UnicodeEncodeError:
        raise CanonicalizationError(f"a string with a lone surrogate: {text[:40]!r}") from None


_escaped = json.encoder.encode_basestring  # type: ignore[attr-defined]


def _utf16_order(key: str) -> bytes:
    """RFC 8785 section 3.2.3: keys compare as arrays of UTF-16 code units."""
    return key.encode("utf-16-be", "surrogatepass")
