"""`referee verify FILE [--key SECRET ...]`: check a replay file offline (no server).

Exit status, with the last line printed:
- 0 `VALID`: consistent, and signed with one of the keys (or no key given: not checked);
- 1 `INVALID`: the re-run, the result or the hash chain differs from the record;
- 2 the file cannot be verified here (unreadable, not a replay, another game version);
- 3 `BAD SIGNATURE`: consistent, but the signature does not hold for its key: the record
  was changed after it was signed;
- 4 `UNSIGNED`: consistent, but unsigned while a key was given (e.g. written by
  `referee play` without REFEREE_SECRET): nothing proves who made it;
- 5 `UNKNOWN KEY`: consistent, signed with a key other than the ones given.
"""

from __future__ import annotations

import argparse
import gzip
import os
import sys
from pathlib import Path

import orjson

from referee.api.replays import ReplaySubmissionSchema
from referee.match.verify import INVALID, MISSING, UNKNOWN_KEY, Report, UnsupportedReplay, verify

HELP = ("re-run a replay file through the engine and check its hashes, result and signature "
        "(exit 0 valid, 1 invalid, 2 not verifiable, 3 bad signature, 4 unsigned, "
        "5 unknown key)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", type=Path, help="a replay record (JSON, or gzipped JSON as "
                                                "`referee archive` writes it), e.g. from "
                                                "GET /matches/{id}/replay")
    parser.add_argument("--key", action="append", default=[], metavar="SECRET",
                        help="a signing secret to check the signature with (repeatable; "
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
    if report.problem is None and report.chain == "valid":
        return SIGNATURE_VERDICTS[report.signature]
    return 1, "INVALID", ""


def run(args: argparse.Namespace) -> int:
    """Exit as the module docstring says."""
    keys = args.key or ([os.environ["REFEREE_SECRET"]] if os.environ.get("REFEREE_SECRET")
                        else [])
    try:
        record = orjson.loads(read_record(args.file))
        errors = ReplaySubmissionSchema().validate(record) if isinstance(record, dict) else {
            "_file": ["a replay record is a JSON object"]}
        if errors:
            print(f"error: {args.file} is not a replay record: {errors}", file=sys.stderr)
            return 2
        report = verify(record, keys)
    except (OSError, EOFError, orjson.JSONDecodeError, UnsupportedReplay) as error:
        print(f"error: cannot verify {args.file}: {error}", file=sys.stderr)
        return 2
    print(f"replay {record.get('match_id')} ({record['game']} {record['game_version']}): "
          f"{report.steps_checked} of {len(record['steps'])} steps re-run")
    print(f"  steps and result: {report.problem or 'consistent'}")
    print(f"  chain: {report.chain}")
    key = f" (key {report.key_id})" if report.key_id else ""
    print(f"  signature: {report.signature}{key}")
    for note in report.notes:
        print(f"  note: {note}")
    status, word, why = verdict(report)
    print(f"{word}: {why}" if why else word)
    return status
