"""Canonical JSON: the bytes that state hashes, hash chains and signatures are made over.

`jcs(value)` is RFC 8785, the JSON Canonicalization Scheme: object keys sorted by their
UTF-16 code units, no whitespace, strings escaped as ECMAScript's `JSON.stringify` does and
numbers written as ECMAScript writes them (3.0 -> `3`, 1e21 -> `1e+21`). A client in any
language that parses a record and writes it again (JavaScript turns 3.0 into 3) gets the
same bytes. RFC 8785 covers the integers a double holds exactly (|n| <= 2**53 - 1); a
larger one (the 64-bit generator state inside an engine state) is written with all its
digits, as JSON itself allows.

`jcs` writes with orjson whenever orjson's bytes are provably the same (ASCII only, no
escapes, no fraction or exponent): engine states, hashed at every step, take that path;
anything else goes through the exact writer below, which leaves strings and doubles to
the `rfc8785` package.

`sorted_json(value)` is the canonical form of `referee-replay/1` records (orjson, sorted
keys), kept so that those records verify exactly as they always did.
"""

from __future__ import annotations

from typing import Any

import orjson
import rfc8785

CanonicalizationError = rfc8785.CanonicalizationError

# digits become 0 and the marks of a fraction or an exponent become ".", so one search for
# "0." finds every digit followed by one of them
_NUMBER_MARKS = bytes.maketrans(b"123456789eE", b"000000000..")


def sorted_json(value: Any) -> bytes:
    """orjson with sorted keys: the canonical form of `referee-replay/1`."""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def jcs(value: Any) -> bytes:
    """RFC 8785 canonical JSON of a JSON value (integers beyond 2**53 written exactly)."""
    try:
        fast = sorted_json(value)
    except TypeError:  # an integer beyond 64 bits, or a key that is not a string
        return _write(value)
    return fast if _orjson_is_jcs(fast) else _write(value)


def _orjson_is_jcs(out: bytes) -> bool:
    """orjson's sorted output equals RFC 8785 when it is ASCII (key order by UTF-16 code
    units is then byte order), has no escape (so no control character) and no number
    with a fraction or an exponent (integers are written alike)."""
    return out.isascii() and b"\\" not in out and not _has_fraction_or_exponent(out)


def _has_fraction_or_exponent(out: bytes) -> bool:
    """Whether a number outside the strings has a `.` or an exponent. Without escapes, a
    byte is inside a string exactly when an odd number of quotes precede it."""
    marked = out.translate(_NUMBER_MARKS)
    at = marked.find(b"0.")
    while at != -1:
        if out.count(b'"', 0, at) % 2 == 0:
            return True
        at = marked.find(b"0.", at + 1)
    return False


def _write(value: Any) -> bytes:
    parts: list[bytes] = []
    _append(value, parts)
    return b"".join(parts)


def _append(value: Any, parts: list[bytes]) -> None:
    if value is None or isinstance(value, bool):
        parts.append({None: b"null", True: b"true", False: b"false"}[value])
    elif isinstance(value, int):
        parts.append(str(int(value)).encode())
    elif isinstance(value, float | str):
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
        parts.append(rfc8785.dumps(key))
        parts.append(b":")
        _append(value[key], parts)
    parts.append(b"}")


def _utf16_order(key: str) -> bytes:
    """RFC 8785 section 3.2.3: keys compare as arrays of UTF-16 code units."""
    return key.encode("utf-16-be", "surrogatepass")
