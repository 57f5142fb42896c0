"""`referee verify FILE [--keys FILE_OR_URL] [--head FILE_OR_URL] [--key SECRET ...]`:
check a replay file offline, with only public keys (no server needed).

`--keys` is a server's key list (its `GET /keys` URL, or a file of that answer): Ed25519
records verify with it. `--key` is an HMAC secret, for HMAC records. Given a signed tree
head (`--head`: `GET /log/head`'s URL or a file), the record's inclusion in the results log
is checked against it: with the record's own `log.proof` when it is for that head's tree,
else with a proof fetched from the head's server. Without `--head`, the record's own
`log.proof` is checked against its own `log.head`.

Exit status, with the last line printed:
- 0 `VALID`: consistent, and signed with one of the keys (or no key given: not checked);
- 1 `INVALID`: the re-run, the result or the hash chain differs from the record;
- 2 the file cannot be verified here (unreadable, not a replay, another game version);
- 3 `BAD SIGNATURE`: consistent, but the signature does not hold for its key: the record
  was changed after it was signed;
- 4 `UNSIGNED`: consistent, but unsigned while a key was given (e.g. written by
  `referee play` without REFEREE_SECRET): nothing proves who made it;
- 5 `UNKNOWN KEY`: consistent, signed with a key other than the ones given;
- 6 `NOT IN LOG`: consistent and signed, but the log proof does not hold (the head's
  signature, or the record's inclusion in that tree).
"""

from __future__ import annotations

import argparse
import gzip
import os
import sys
from pathlib import Path

import orjson

from referee import monitor
from referee.api.replays import ReplaySubmissionSchema
from referee.match.replay import Record, TreeHead
from referee.match.sealing import Verifier
from referee.match.verify import (
    INVALID,
    MISSING,
    UNKNOWN_KEY,
    VALID,
    Report,
    UnsupportedReplay,
    check_log,
    verify,
)

HELP = ("re-run a replay file through the engine and check its hashes, result, signature and "
        "log proof (exit 0 valid, 1 invalid, 2 not verifiable, 3 bad signature, 4 unsigned, "
        "5 unknown key, 6 log proof does not hold)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", type=Path, help="a replay record (JSON, or gzipped JSON as "
                                                "`referee archive` writes it), e.g. from "
                                                "GET /matches/{id}/replay")
    parser.add_argument("--keys", metavar="FILE_OR_URL",
                        help="the public keys: a server's GET /keys URL or a file of it")
    parser.add_argument("--head", metavar="FILE_OR_URL",
                        help="a signed tree head: a server's GET /log/head URL or a file of it")
    parser.add_argument("--key", action="append", default=[], metavar="SECRET",
                        help="an HMAC secret, for HMAC-signed records (repeatable; "
                             "default: REFEREE_SECRET when set)")


GZIP_MAGIC = b"\x1f\x8b"


def read_record(path: Path) -> bytes:
    """The file's JSON, gunzipped when it is gzip (an archived replay)."""
    data = path.read_bytes()
    return gzip.decompress(data) if data[:2] == GZIP_MAGIC else data


SIGNATURE_VERDICTS = {
    INVALID: (3, "BAD SIGNATURE", "the signature does not hold for its key: the record was "
                                  "changed after it was signed"),
    MISSING: (4, "UNSIGNED", "the record is consistent but carries no signature, so nothing "
                             "proves who made it (a replay of `referee play` run without "
                             "REFEREE_SECRET)"),
    UNKNOWN_KEY: (5, "UNKNOWN KEY", "the record is signed with a key other than the ones "
                                    "given (see its key id)"),
}


def verdict(report: Report) -> tuple[int, str, str]:
    """The exit status, the verdict word and why (see the module docstring)."""
    if report.valid:
        return 0, "VALID", ""
    if report.problem is not None or report.chain != VALID:
        return 1, "INVALID", ""
    if report.signature in SIGNATURE_VERDICTS:
        return SIGNATURE_VERDICTS[report.signature]
    return 6, "NOT IN LOG", report.log_problem or "the log proof does not hold"


def verifier(args: argparse.Namespace) -> Verifier:
    """The public keys of `--keys` and the secrets of `--key` (else REFEREE_SECRET)."""
    secrets = args.key or [os.environ.get("REFEREE_SECRET", "")]
    public = monitor.public_keys(monitor.read_json(args.keys)) if args.keys else []
    return Verifier.of(public, secrets)


def check_against_head(record: Record, source: str, keys: Verifier, report: Report) -> None:
    """Check the record's inclusion in the tree of the head at `source` (into `report`)."""
    head: TreeHead = monitor.read_json(source)
    logged = record.get("log")
    proof = logged.get("proof") if isinstance(logged, dict) else None
    if not isinstance(logged, dict) or "index" not in logged:
        outcome = "the record carries no log index: it is not (yet) logged"
    elif isinstance(head, dict) and isinstance(proof, dict) and (
            proof.get("tree_size") == head.get("tree_size")):
        outcome = check_log(record, proof, head, keys)
    elif source.startswith(("http://", "https://")) and isinstance(head, dict):
        base = source.rstrip("/").removesuffix("/log/head")
        proof = monitor.read_json(f"{base}/log/proof/{record['match_id']}?tree_size="
                                  f"{head.get('tree_size')}")
        outcome = check_log(record, proof, head, keys)
    else:
        outcome = ("the record's proof is not for the head's tree: give the head's URL "
                   "so that a proof against it is fetched")
    report.log, report.log_problem = (VALID, None) if outcome == VALID else (INVALID, outcome)
    report.valid = report.valid if report.log == VALID else False


def run(args: argparse.Namespace) -> int:
    """Exit as the module docstring says."""
    try:
        keys = verifier(args)
        record = orjson.loads(read_record(args.file))
        errors = ReplaySubmissionSchema().validate(record) if isinstance(record, dict) else {
            "_file": ["a replay record is a JSON object"]}
        if errors:
            print(f"error: {args.file} is not a replay record: {errors}", file=sys.stderr)
            return 2
        report = verify(record, keys)
        if args.head:
            check_against_head(record, args.head, keys, report)
    except (OSError, EOFError, orjson.JSONDecodeError, UnsupportedReplay,
            monitor.Unreachable) as error:
        print(f"error: cannot verify {args.file}: {error}", file=sys.stderr)
        return 2
    print(f"replay {record.get('match_id')} ({record['game']} {record['game_version']}): "
          f"{report.steps_checked} of {len(record['steps'])} steps re-run")
    print(f"  steps and result: {report.problem or 'consistent'}")
    print(f"  chain: {report.chain}")
    key = f" (key {report.key_id})" if report.key_id else ""
    print(f"  signature: {report.signature}{key}")
    log = f" ({report.log_problem})" if report.log_problem else ""
    print(f"  log proof: {report.log}{log}")
    for note in report.notes:
        print(f"  note: {note}")
    status, word, why = verdict(report)
    print(f"{word}: {why}" if why else word)
    return status
