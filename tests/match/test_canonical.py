"""RFC 8785 canonical JSON (`referee.match.canonical.jcs`): the RFC's own examples, the reference
implementation (`rfc8785`) and Node.js's JSON.stringify over generated values."""

from __future__ import annotations

import json
import math
import random
import shutil
import struct
import subprocess

import pytest
import rfc8785
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.match import canonical
from referee.match.canonical import CanonicalizationError, jcs, sorted_json
from tests.support.python_process import printed_by

SAFE = 2**53 - 1

# RFC 8785 Appendix B: IEEE 754 bit patterns and their canonical text.
APPENDIX_B = [
    ("0000000000000000", "0"), ("8000000000000000", "0"),
    ("0000000000000001", "5e-324"), ("8000000000000001", "-5e-324"),
    ("7fefffffffffffff", "1.7976931348623157e+308"),
    ("ffefffffffffffff", "-1.7976931348623157e+308"),
    ("4340000000000000", "9007199254740992"), ("c340000000000000", "-9007199254740992"),
    ("4430000000000000", "295147905179352830000"),
    ("44b52d02c7e14af5", "9.999999999999997e+22"), ("44b52d02c7e14af6", "1e+23"),
    ("44b52d02c7e14af7", "1.0000000000000001e+23"),
    ("444b1ae4d6e2ef4e", "999999999999999700000"), ("444b1ae4d6e2ef4f", "999999999999999900000"),
    ("444b1ae4d6e2ef50", "1e+21"),
    ("3eb0c6f7a0b5ed8c", "9.999999999999997e-7"), ("3eb0c6f7a0b5ed8d", "0.000001"),
    ("41b3de4355555553", "333333333.3333332"), ("41b3de4355555554", "333333333.33333325"),
    ("41b3de4355555555", "333333333.3333333"), ("41b3de4355555556", "333333333.3333334"),
    ("41b3de4355555557", "333333333.33333343"),
    ("becbf647612f3696", "-0.0000033333333333333333"),
    ("43143ff3c1cb0959", "1424953923781206.2"),
]


def _double(bits: str) -> float:
    return struct.unpack(">d", bytes.fromhex(bits))[0]


@pytest.mark.parametrize(("bits", "text"), APPENDIX_B)
def test_numbers_follow_rfc8785_appendix_b(bits, text):
    assert jcs([_double(bits)]) == f"[{text}]".encode()


@pytest.mark.parametrize("bits", ["7fffffffffffffff", "7ff0000000000000"])
def test_nan_and_infinity_are_written_as_javascript_writes_them(bits):
    """RFC 8785 section 3.2.2.3: NaN and Infinity are not JSON numbers. No value parsed
    from JSON holds one, and no record the referee makes does; should one come, it is
    written `null`, as JSON.stringify writes it."""
    assert jcs({"x": 1.5, "y": _double(bits)}) == b'{"x":1.5,"y":null}'


@pytest.mark.parametrize("bits", ["7fffffffffffffff", "7ff0000000000000"])
def test_the_exact_writer_refuses_nan_and_infinity(bits):
    with pytest.raises(CanonicalizationError):
        jcs({"x": 1.5, "y": _double(bits), "not ascii": "é"})


def test_the_rfc_section_3_2_2_example():
    value = json.loads('{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, '
                       '0.000000000000000000000000001], "string": '
                       '"\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/", '
                       '"literals": [null, true, false]}')
    expected = ('{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,'
                '1e-27],"string":"\u20ac$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}')
    assert jcs(value) == expected.encode()


def test_keys_sort_by_utf16_code_units_as_in_rfc_section_3_2_3():
    value = {"\u20ac": "Euro Sign", "\r": "Carriage Return",
             "\ufb33": "Hebrew Letter Dalet With Dagesh", "1": "One",
             "\U0001f600": "Emoji: Grinning Face", "\u0080": "Control",
             "\u00f6": "Latin Small Letter O With Diaeresis"}
    order = [key for key in json.loads(jcs(value))]
    assert order == ["\r", "1", "\u0080", "\u00f6", "\u20ac", "\U0001f600", "\ufb33"]


def test_an_integral_float_is_written_as_an_integer():
    """The JavaScript round trip: 3.0 is parsed as 3 and written `3`; both hash alike."""
    assert jcs({"elapsed_ms": 3.0}) == jcs({"elapsed_ms": 3}) == b'{"elapsed_ms":3}'


def test_integers_beyond_the_double_range_keep_every_digit():
    """Engine states hold a 64-bit generator state; RFC 8785 does not cover it, so it is
    written exactly, on both paths (orjson's, and the exact writer's)."""
    big = 2**64 - 1
    assert jcs({"rng": big}) == b'{"rng":18446744073709551615}'
    assert jcs({"rng": big, "x": 0.5}) == b'{"rng":18446744073709551615,"x":0.5}'
    assert jcs([2**70]) == f"[{2**70}]".encode()


def test_orjson_path_is_taken_only_when_its_bytes_are_canonical():
    """Strings that look like numbers do not matter; real fractions do."""
    plain = {"version": "1.0.0", "note": "3e5", "n": [1, 2, 30], "ok": True, "none": None}
    assert jcs(plain) == sorted_json(plain)
    assert jcs({"a": 1.0}) != sorted_json({"a": 1.0})
    assert jcs({"a": "\u00e9"}) == '{"a":"\u00e9"}'.encode()
    assert jcs({"a": "line\nbreak"}) == b'{"a":"line\\nbreak"}'


def test_doubles_already_written_as_ecmascript_writes_them_are_not_rewritten(monkeypatch):
    """A step's `elapsed_ms` of 20.513 is written alike by orjson and ECMAScript (both the
    shortest digits that read back the double): orjson's bytes are kept as they are; only
    an integral double or one with an exponent is rewritten."""
    def rewrite(fast: bytes) -> bytes:
        raise AssertionError(f"rewritten: {fast!r}")

    monkeypatch.setattr(canonical, "_ecmascript_doubles", rewrite)
    value = {"elapsed_ms": 20.513, "n": [0.5, -1.25, 10.05, 0.000025], "v": "3.0"}
    assert jcs(value) == sorted_json(value) == rfc8785.dumps(value)
    for needs_rewriting in (3.0, -0.0, 1e16, 1e-7):
        with pytest.raises(AssertionError, match="rewritten"):
            jcs({"x": needs_rewriting})


def test_strings_are_escaped_as_the_rfc_escapes_them_every_code_point():
    """The exact writer (taken for text that is not ASCII or holds escapes) writes strings
    with orjson: every code point but the surrogates, as a value and as a key, the same
    bytes as the `rfc8785` package; a lone surrogate is refused by both."""
    text = "".join(chr(code) for code in range(0x110000) if not 0xD800 <= code <= 0xDFFF)
    assert jcs([text]) == rfc8785.dumps([text])
    assert jcs({text: 1, "\u00e9": 2}) == rfc8785.dumps({text: 1, "\u00e9": 2})
    for lone in ("\ud800", "a\udfffb"):
        with pytest.raises(CanonicalizationError):
            jcs({"debug": lone})


def test_keys_must_be_strings():
    with pytest.raises(CanonicalizationError):
        jcs({1: "one"})


def _json_values(leaves):
    return st.recursive(leaves, lambda children: st.lists(children, max_size=5)
                        | st.dictionaries(st.text(max_size=6), children, max_size=5),
                        max_leaves=25)


SAFE_LEAVES = (st.none() | st.booleans() | st.integers(-SAFE, SAFE)
               | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=12))


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(_json_values(SAFE_LEAVES))
def test_agrees_with_the_rfc8785_package(value):
    assert jcs(value) == rfc8785.dumps(value)


# Text shaped like numbers, as a bot's debug, info or raw answer in a step may be: the
# search for doubles in orjson's bytes must neither miss a real one beside it nor look at
# every byte of it again for each of its marks.
NUMBERISH = st.lists(st.sampled_from(["1", "0", "5", ".", "e", "+", "-", ":", ",", "[", "]",
                                      "{", "}", "a", " "]), max_size=40).map("".join)
NUMBERISH_LEAVES = (st.integers(-SAFE, SAFE) | st.floats(allow_nan=False, allow_infinity=False)
                    | NUMBERISH)


@settings(max_examples=1000, suppress_health_check=[HealthCheck.too_slow])
@given(_json_values(NUMBERISH_LEAVES))
def test_text_shaped_like_numbers_hides_no_double(value):
    assert jcs(value) == rfc8785.dumps(value)


def test_canonical_json_is_linear_in_text_shaped_like_numbers():
    """A step whose debug text is 1,000,000 bytes of `1.1.1...` (or `1e-1e-...`, `:1.1...`,
    `1.a1.a...`, or `1.01.0...` and `:1.0:1.0...`, shaped like the integral doubles that
    are rewritten): linear, well under a second each; the search before walked back over
    the whole run for each of its marks (0.4 s for a bot's 4,096 bytes of debug, days at
    this length)."""
    script = ("from referee.match.canonical import jcs\n"
              "n = 1_000_000\n"
              "for text in ['1.' * n, '1e-' * n, ':1.1' * n, '1.a' * n, '1' * n + '.5',\n"
              "             '1.0' * n, ':1.0' * n, '1.0e+1' * n]:\n"
              "    jcs({'debug': text[:n], 'elapsed_ms': 20.5})\n"
              "print('done')\n")
    assert printed_by(script) == "done"


def _random_value(chooser: random.Random, depth: int):
    """A JSON value with keys and strings from several Unicode planes and doubles of every
    magnitude (drawn from their bit patterns)."""
    kind = chooser.randrange(8 if depth else 5)
    if kind == 0:
        return chooser.choice([None, True, False])
    if kind == 1:
        return chooser.randint(-SAFE, SAFE)
    if kind == 2:
        double = struct.unpack(">d", chooser.getrandbits(64).to_bytes(8, "big"))[0]
        return double if math.isfinite(double) else 0.5
    if kind in (3, 4):
        return _random_text(chooser)
    if kind == 5:
        return [_random_value(chooser, depth - 1) for _ in range(chooser.randrange(4))]
    return {_random_text(chooser): _random_value(chooser, depth - 1)
            for _ in range(chooser.randrange(5))}


def _random_text(chooser: random.Random) -> str:
    ranges = [(0x20, 0x7E), (0, 0x1F), (0x80, 0x7FF), (0xE000, 0xFFFF), (0x10000, 0x10FFFF)]
    return "".join(chr(chooser.randint(*chooser.choice(ranges)))
                   for _ in range(chooser.randrange(6)))


NODE_CANONICAL = """
const canon = v => Array.isArray(v) ? "[" + v.map(canon).join(",") + "]"
  : v !== null && typeof v === "object"
    ? "{" + Object.keys(v).sort().map(k => JSON.stringify(k) + ":" + canon(v[k])).join(",") + "}"
    : JSON.stringify(v);
let input = "";
process.stdin.on("data", d => input += d);
process.stdin.on("end", () => {
  for (const line of input.split("\\n").filter(Boolean)) console.log(canon(JSON.parse(line)));
});
"""


def test_agrees_with_node_json_stringify():
    """RFC 8785 is JSON.stringify with keys sorted by UTF-16 code units (what JavaScript's
    sort does): Node.js writes the same bytes for generated values, non-ASCII keys and
    numbers of every magnitude included."""
    node = shutil.which("node")
    assert node, "node is missing: run scripts/install"
    chooser = random.Random(8785)
    values = [_random_value(chooser, 3) for _ in range(200)]
    values += [[_double(bits) for bits, _ in APPENDIX_B], {"\ufb33": 1, "\U0001f600": 2}]
    lines = [json.dumps(value, ensure_ascii=False) for value in values]
    done = subprocess.run([node, "-e", NODE_CANONICAL], input="\n".join(lines) + "\n",
                          capture_output=True, text=True, timeout=60, check=True)
    produced = done.stdout.splitlines()
    assert len(produced) == len(values)
    for value, from_node in zip(values, produced, strict=True):
        assert jcs(value).decode() == from_node, value
