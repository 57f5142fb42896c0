"""`referee verify FILE [--key SECRET ...]`: check a replay file offline (no server)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import orjson

from referee.audit import UnsupportedReplay, verify
from referee.schemas import ReplaySubmissionSchema

HELP = "re-run a replay file through the engine and check its hashes, result and signature"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", type=Path, help="a replay record (JSON), e.g. from "
                                                "GET /matches/{id}/replay")
    parser.add_argument("--key", action="append", default=[], metavar="SECRET",
                        help="a signing secret to check the signature with (repeatable; "
                             "default: REFEREE_SECRET when set)")


def run(args: argparse.Namespace) -> int:
    """Exit 0 when valid, 1 when not, 2 when the file cannot be verified here."""
    keys = args.key or ([os.environ["REFEREE_SECRET"]] if os.environ.get("REFEREE_SECRET")
                        else [])
    try:
        record = orjson.loads(args.file.read_bytes())
        errors = ReplaySubmissionSchema().validate(record) if isinstance(record, dict) else {
            "_file": ["a replay record is a JSON object"]}
        if errors:
            print(f"error: {args.file} is not a replay record: {errors}", file=sys.stderr)
            return 2
        report = verify(record, keys)
    except (OSError, orjson.JSONDecodeError, UnsupportedReplay) as error:
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
    print("VALID" if report.valid else "INVALID")
    return 0 if report.valid else 1
