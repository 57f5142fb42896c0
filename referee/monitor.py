"""The results log's auditor, `referee log monitor URL`: what anyone can run from cron to
catch a server rewriting its history (issue 25).

Each run fetches the server's keys and signed tree head and checks, against the state the
last run saved:
- the head is signed by a published key, and no key seen before has gone or changed;
- the tree only grew: a consistency proof (RFC 6962 2.1.2) from the saved head holds;
- the entries since the saved head (every entry with `full`) give the signed root, leaf
  after leaf, from the saved right edge of the tree (a `merkle.Frontier`);
- the record of each of those entries is served, re-runs and verifies (chain, signature),
  and hashes to its leaf.
The first inconsistency stops the run (`Inconsistency`, naming the entry); otherwise the
new head and right edge are saved for the next run.
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, cast
from urllib.parse import quote

import requests

from referee.errors import RefereeError
from referee.match import merkle, replay
from referee.match.merkle import Frontier
from referee.match.replay import Record, TreeHead
from referee.match.sealing import HMAC_SHA256, VALID, Verifier, from_b64url, public_key_id
from referee.match.verify import UnsupportedReplay, check_head, verify, well_formed_head

TIMEOUT_S = 30
PAGE = 1000


class Inconsistency(RefereeError):
    """The server's log or records do not hold together; the message says where."""


class Unreachable(RefereeError):
    """The server did not answer as a referee does (down, not a referee, a 5xx)."""


@dataclass
class MonitorState:
    """What a run keeps for the next: the last head checked and the tree's right edge."""

    url: str
    tree_size: int = 0
    root_hash: str = merkle.EMPTY_ROOT.hex()
    frontier: list[str] = field(default_factory=list)
    keys: dict[str, str] = field(default_factory=dict)  # key id -> public key (base64url)

    @classmethod
    def load(cls, path: Path, url: str) -> MonitorState:
        """The state saved at `path` (a fresh one when there is none); Unreachable when it
        is unreadable or another server's."""
        if not path.exists():
            return cls(url)
        try:
            state = cls(**json.loads(path.read_text()))
            state.check()
        except (OSError, ValueError, TypeError) as error:
            raise Unreachable(f"the state file {path} cannot be read: {error}") from None
        if state.url != url:
            raise Unreachable(f"the state file {path} is of {state.url}, not {url}")
        return state

    def check(self) -> None:
        """ValueError when a field is not what a run saves."""
        if not isinstance(self.url, str) or not isinstance(self.tree_size, int) or (
                self.tree_size < 0):
            raise ValueError("url or tree_size is malformed")
        bytes.fromhex(self.root_hash)
        Frontier(self.tree_size, [bytes.fromhex(h) for h in self.frontier])
        if not isinstance(self.keys, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in self.keys.items()):
            raise ValueError("keys is not an object of key id -> public key")

    def save(self, path: Path) -> None:
        """Write the state whole or not at all."""
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
        temporary.write_text(json.dumps(asdict(self), indent=1))
        os.replace(temporary, path)


@dataclass
class RunReport:
    head: TreeHead
    checked: int = 0
    notes: list[str] = field(default_factory=list)


class LogClient:
    """The few calls a monitor makes, as JSON."""

    def __init__(self, base: str, session: requests.Session | None = None):
        self.base = base.rstrip("/")
        self.session = session or requests.Session()

    def get(self, path: str, missing_ok: bool = False) -> Any:
        """The JSON answer to GET `path`; None for a 404 (or a 503) when `missing_ok`."""
        try:
            response = self.session.get(f"{self.base}{path}", timeout=TIMEOUT_S)
        except requests.RequestException as error:
            raise Unreachable(f"GET {self.base}{path}: {error}") from None
        if response.status_code in (404, 503) and missing_ok:
            return None
        if response.status_code != 200:
            detail = response.text[:300].strip()
            raise Unreachable(f"GET {path} answered {response.status_code}: {detail}")
        try:
            return response.json()
        except ValueError:
            raise Unreachable(f"GET {path} did not answer JSON") from None


def run(client: LogClient, state: MonitorState, full: bool = False,
        say: Callable[[str], None] = print) -> tuple[MonitorState, RunReport]:
    """One monitoring run (the module's docstring); the state to save and what was seen."""
    keys = _checked_keys(client.get("/keys"), state)
    verifier = Verifier.of(from_b64url(key) for key in keys.values())
    head: TreeHead = client.get("/log/head")
    if not well_formed_head(head):
        raise Unreachable(f"GET /log/head answered no tree head: {str(head)[:200]}")
    report = RunReport(head)
    if not keys:
        report.notes.append("the server publishes no key (HMAC-only): its heads and "
                            "records cannot be authenticated, only checked for consistency")
    elif (outcome := check_head(head, verifier)) != VALID:
        raise Inconsistency(f"the log head: {outcome}")
    size, root = head["tree_size"], bytes.fromhex(head["root_hash"])
    _check_grew(client, state, size, root)
    start = 0 if full else state.tree_size
    frontier = Frontier() if full else Frontier(state.tree_size,
                                                [bytes.fromhex(h) for h in state.frontier])
    for entry in _entries(client, start, size):
        _check_record(client, entry, verifier, report)
        frontier.append(bytes.fromhex(entry["leaf_hash"]))
        if full and frontier.size == state.tree_size and (
                frontier.root().hex() != state.root_hash):
            raise Inconsistency(f"the entries up to {state.tree_size} do not give the root "
                                f"the last run saw: a leaf before it was changed")
    if frontier.size != size or frontier.root() != root:
        raise Inconsistency(f"the entries {start}..{size - 1} do not give the signed root "
                            f"of the tree of {size}: a leaf was removed, changed, reordered "
                            "or inserted")
    say(f"log of {client.base}: {size} entries, root {head['root_hash'][:16]}..., "
        f"{report.checked} records checked")
    return MonitorState(state.url, size, head["root_hash"],
                        [h.hex() for h in frontier.hashes], keys), report


def _checked_keys(answer: Any, state: MonitorState) -> dict[str, str]:
    """The published keys by id; Inconsistency when one seen before is gone or changed."""
    try:
        keys = {key["key_id"]: key["public_key"] for key in answer["keys"]}
    except (KeyError, TypeError) as error:
        raise Unreachable(f"GET /keys answered no key list ({error})") from None
    for key_id, public in state.keys.items():
        if keys.get(key_id) != public:
            raise Inconsistency(f"key {key_id}, published before, is "
                                f"{'gone' if key_id not in keys else 'changed'}: records "
                                "signed with it no longer verify")
    for key_id, public in keys.items():
        try:
            raw = from_b64url(public)
        except ValueError:
            raise Inconsistency(f"key {key_id}: its public key is not base64url") from None
        if public_key_id(raw) != key_id:
            raise Inconsistency(f"key {key_id} is not the id of its public key")
    return keys


def _check_grew(client: LogClient, state: MonitorState, size: int, root: bytes) -> None:
    if size < state.tree_size:
        raise Inconsistency(f"the log shrank from {state.tree_size} to {size} entries")
    old_root = bytes.fromhex(state.root_hash)
    if state.tree_size == 0:
        return
    if size == state.tree_size:
        if root != old_root:
            raise Inconsistency(f"the tree of {size} entries has another root than at the "
                                "last run: history was rewritten")
        return
    answer = client.get(f"/log/consistency?first={state.tree_size}&second={size}")
    proof = [bytes.fromhex(node) for node in answer.get("proof", [])]
    if not merkle.verify_consistency(state.tree_size, size, old_root, root, proof):
        raise Inconsistency(f"no consistency between the tree of {state.tree_size} seen at "
                            f"the last run and the tree of {size}: history was rewritten")


def _entries(client: LogClient, start: int, end: int) -> Iterator[dict[str, Any]]:
    """The entries [start, end), page by page, each checked to be the index asked."""
    at = start
    while at < end:
        page = client.get(f"/log/entries?start={at}&end={min(at + PAGE, end)}")["entries"]
        if not page:
            raise Inconsistency(f"the log serves no entry {at} though its head has {end}")
        for entry in page:
            if entry.get("index") != at:
                raise Inconsistency(f"entry {at} is served as index {entry.get('index')}")
            yield entry
            at += 1


def _check_record(client: LogClient, entry: dict[str, Any], verifier: Verifier,
                  report: RunReport) -> None:
    index, match_id = entry["index"], entry["match_id"]
    where = f"entry {index} (match {match_id})"
    record: dict[str, Any] | None = client.get(
        f"/matches/{quote(match_id, safe='')}/replay", missing_ok=True)
    if record is None:
        raise Inconsistency(f"{where}: its record is not served (404 or 503): it was "
                            "deleted, or is out of the server's reach")
    if record.get("match_id") != match_id:
        raise Inconsistency(f"{where}: the record served is of match {record.get('match_id')}")
    logged = cast(Record, {k: v for k, v in record.items() if k != "log"})
    leaf = merkle.leaf_hash(replay.leaf_data(logged)).hex()
    if leaf != entry["leaf_hash"]:
        raise Inconsistency(f"{where}: the record served does not hash to its leaf: it was "
                            "changed or replaced after it was logged")
    said = (record.get("log") or {}).get("index")
    if said != index:
        raise Inconsistency(f"{where}: the record says it is entry {said}")
    try:
        result = verify(logged, verifier)
    except UnsupportedReplay as error:
        report.notes.append(f"{where}: not re-run here ({error})")
        report.checked += 1
        return
    hmac_signed = (record.get("signature") or {}).get("algorithm") == HMAC_SHA256
    if result.problem or result.chain != VALID:
        raise Inconsistency(f"{where}: the record does not re-run: "
                            f"{result.problem or 'the hash chain does not hold'}")
    if hmac_signed:
        report.notes.append(f"{where}: HMAC-signed (before Ed25519, or an HMAC-only "
                            "server): only its leaf and re-run are checked")
    elif result.signature != VALID and not verifier.empty:
        raise Inconsistency(f"{where}: the record's signature is {result.signature}")
    report.checked += 1


def read_json(source: str) -> Any:
    """JSON from a file, or from an http(s) URL (`--keys`, `--head`); Unreachable when it
    cannot be had."""
    if source.startswith(("http://", "https://")):
        try:
            response = requests.get(source, timeout=TIMEOUT_S)
            response.raise_for_status()
            return response.json()
        except (requests.RequestException, ValueError) as error:
            raise Unreachable(f"{source}: {error}") from None
    try:
        return json.loads(Path(source).read_text())
    except (OSError, ValueError) as error:
        raise Unreachable(f"{source}: {error}") from None


def public_keys(answer: Any) -> list[bytes]:
    """The raw public keys of a `GET /keys` answer; Unreachable when it is not one."""
    try:
        return [from_b64url(key["public_key"]) for key in answer["keys"]]
    except (KeyError, TypeError, ValueError) as error:
        raise Unreachable(f"not a key list as GET /keys answers ({error!r})") from None
