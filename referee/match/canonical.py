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
strings are written alike; integers are written alike): engine states, hashed at every
step, and step records take that path, at C speed but for the few doubles; anything else
goes through the exact writer below, which leaves strings and doubles to the `rfc8785`
package.

`sorted_json(value)` is the canonical form of `referee-replay/1` records (orjson, sorted
keys), kept so that those records verify exactly as they always did.
"""

from __future__ import annotations

import re
from typing import Any

import orjson
import rfc8785

CanonicalizationError = rfc8785.CanonicalizationError

# in orjson's ASCII output without escapes: a string, or a number
_STRING = re.compile(rb'"[^"]*"')
_STRING_OR_NUMBER = re.compile(rb'"[^"]*"|-?[0-9][0-9.eE+-]*')
_DOUBLE_MARK = re.compile(rb"[.eE]")  # in a number token
# a number with a fraction or an exponent where a value starts (first, or after `:`, `,`
# or `[`); inside a string it is a false alarm, which only costs the slower check below
_DOUBLE_VALUE = re.compile(rb"(?:^|[:,\[])-?[0-9]+(?:\.[0-9]|[eE])")


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
    if not _DOUBLE_VALUE.search(fast) or not _DOUBLE_VALUE.search(_STRING.sub(b'""', fast)):
        return fast  # no double: orjson's bytes are RFC 8785's
    return _STRING_OR_NUMBER.sub(_ecmascript_number, fast)


def _ecmascript_number(token: re.Match) -> bytes:
    """A number of orjson's output as ECMAScript writes it (3.0 -> 3); strings as they are."""
    text = token.group()
    if text[0] == 34 or not _DOUBLE_MARK.search(text):  # a string, or an integer
        return text
    return rfc8785.dumps(float(text))


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
