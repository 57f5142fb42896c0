"""Every Redis key, hash field, Lua script and Redis command of the product lives in
tournament/store/: the product code elsewhere (engines/, referee/, tournament/, bots/) goes
through the store's functions. The scanner is checked on planted violations too."""

from __future__ import annotations

import ast
import re
import shutil
from pathlib import Path

import pytest

from referee.api import auth

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = ("engines", "referee", "tournament", "bots")
STORE = ROOT / "tournament" / "store"

# A Redis key: the referee's prefix, or one of its key families, then ":" and no space
# ("referee: error" is a message).
KEY_LITERAL = re.compile(r"((^|:)referee|^(match|matches|bot|bots|tournament|tournaments|"
                         r"ratings|ratelimit|archive|metrics|timers|running)):(?!\s)")
# Names of keys that stand alone (`referee:running`), found right after a formatted prefix.
BARE_KEYS = {"bots", "matches", "tournaments", "timers", "running"}
# Hash fields that only the store's hashes have (others, like "status", are JSON keys too).
STORE_FIELDS = {"timers", "deadline_timer", "wakes", "deferrals", "asked_at"}
LUA = re.compile(r"redis\.p?call|KEYS\[\d|ARGV\[\d")
REDIS_COMMANDS = {
    "hset", "hget", "hgetall", "hmget", "hincrby", "hdel", "hexists", "hvals", "hlen",
    "lrange", "llen", "lpop", "rpush", "blpop", "lmove", "zadd", "zrem", "zrange",
    "zrevrange", "zrangebyscore", "zcard", "zscore", "sadd", "srem", "sismember",
    "smismember", "scard", "sunion", "smembers", "mget", "incr", "expire", "eval", "evalsha",
    "register_script", "pipeline", "transaction", "multi", "watch", "pubsub",
}
STORE_MODULES = ("tournament.store", "tournament.store.keys")
SCOPES = frozenset(auth.SCOPES)  # the account tokens' scopes (issue 27), not keys
KEY_NAMES = re.compile(r".*_key$|^(MatchField|MatchPart|TournamentField|TournamentPart|"
                       r"RatingsPart|PREFIX)$")


def violations(source: str, name: str) -> list[str]:
    """What in `source` (the module `name`) belongs in tournament/store/."""
    found = []
    for node in ast.walk(ast.parse(source)):
        where = f"{name}:{getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.Attribute) and node.attr == "redis":
            found.append(f"{where}: .redis")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and (
                node.func.attr in REDIS_COMMANDS):
            found.append(f"{where}: Redis command {node.func.attr}")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            found += [f"{where}: {problem}" for problem in _string_problems(node.value)]
        elif isinstance(node, ast.JoinedStr):
            found += [f"{where}: key {part!r}" for part in _prefixed_parts(node)]
        elif isinstance(node, ast.ImportFrom) and node.module in STORE_MODULES:
            found += [f"{where}: imports {alias.name}" for alias in node.names
                      if KEY_NAMES.match(alias.name)]
    return found


def _string_problems(text: str) -> list[str]:
    problems = []
    if KEY_LITERAL.search(text) and text not in SCOPES:  # "bots:write" names a scope
        problems.append(f"key {text[:40]!r}")
    if text in STORE_FIELDS:
        problems.append(f"field {text!r}")
    if LUA.search(text):
        problems.append("Lua script")
    return problems


def _prefixed_parts(node: ast.JoinedStr) -> list[str]:
    """The constant parts of an f-string that name a key after a formatted prefix."""
    parts = node.values
    return [part.value for before, part in zip(parts, parts[1:], strict=False)
            if isinstance(before, ast.FormattedValue) and isinstance(part, ast.Constant)
            and part.value in BARE_KEYS]


def scan(root: Path, packages: tuple[str, ...] = PRODUCT, store: Path = STORE) -> list[str]:
    """Every violation in the packages under `root`, the store excepted."""
    found = []
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            if path.is_relative_to(store):
                continue
            found += violations(path.read_text(), str(path.relative_to(root)))
    return found


def test_the_product_code_reaches_redis_only_through_the_store():
    assert scan(ROOT) == []


PLANTED = {
    "a .redis call": "store.redis.hget(key, 'status')\n",
    "a .redis attribute": "client = store.redis\n",
    "a command on a pipeline": "pipe.rpush(key, 1)\n",
    "a key literal": "key = 'referee:match:m-1'\n",
    "a key family": "key = f'ratings:{game}:elo'\n",
    "a prefixed bare key": "key = f'{PREFIX}running'\n",
    "the timers key": "key = f'{PREFIX}timers'\n",
    "a store field": "store.hincr(key, 'deadline_timer')\n",
    "a Lua script": "SCRIPT = \"return redis.call('GET', KEYS[1])\"\n",
    "a key builder imported": "from tournament.store import match_key\n",
    "a field enum imported": "from tournament.store.keys import MatchField\n",
}


@pytest.mark.parametrize("planted", PLANTED.values(), ids=PLANTED.keys())
def test_the_scanner_catches_each_kind_of_violation(planted):
    assert violations(planted, "planted.py")


def test_the_scanner_lets_through_what_is_no_key():
    clean = ("from tournament.store import Store, events_channel\n"
             "status = 'running'\nview = {'matches': [], 'bots': []}\n"
             "redis.RedisError\nstore.get_match('m-1')\n")
    assert violations(clean, "clean.py") == []


def test_the_scanner_finds_a_violation_planted_in_a_copy_of_the_product(tmp_path):
    for package in PRODUCT:
        shutil.copytree(ROOT / package, tmp_path / package,
                        ignore=shutil.ignore_patterns("__pycache__"))
    planted = tmp_path / "tournament" / "deals.py"
    planted.write_text(planted.read_text() + "\n\ndef leak(store):\n"
                       "    return store.redis.hget('referee:match:m-1', 'status')\n")
    found = scan(tmp_path, store=tmp_path / "tournament" / "store")
    assert found and all(line.startswith("tournament/deals.py:") for line in found)
    assert any(".redis" in line for line in found)
    assert any("key" in line for line in found)
