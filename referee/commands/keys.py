"""`referee keys rotate --key-file F`: add a new current Ed25519 signing key.

The key is appended to F (made, mode 0600, when absent) and its public half published in
Redis at once (`GET /keys`), the key it replaces marked retired (`not_after`). `referee
serve` and `referee worker` sign with it after a restart or a SIGHUP; records signed before
keep verifying with the old key, which stays in the file and at GET /keys
(docs/operations.md, Signing keys).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import redis

from referee.config import Config, redacted_url
from referee.match.sealing import KeyFileError, Sealer, append_new_key, b64url
from tournament import results_log
from tournament.store import Store

HELP = "manage the Ed25519 keys records are signed with (rotate: add a new current key)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    rotate = actions.add_parser("rotate", help="append a new current key to the key file and "
                                               "publish its public half")
    rotate.add_argument("--key-file", type=Path,
                        default=os.environ.get("REFEREE_SIGNING_KEY_FILE") or None,
                        required=not os.environ.get("REFEREE_SIGNING_KEY_FILE"),
                        help="the key file (default: REFEREE_SIGNING_KEY_FILE)")


def run(args: argparse.Namespace) -> int:
    config = Config.from_env()
    try:
        key = append_new_key(args.key_file)
        sealer = Sealer.from_key_file(args.key_file)
    except (KeyFileError, OSError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"new current key {key.key_id} (public key {b64url(key.public_raw)}) appended to "
          f"{args.key_file}, after {len(sealer.keys) - 1} older key(s)")
    try:
        results_log.publish_keys(Store.from_url(config.redis_url), sealer)
    except redis.RedisError as error:
        print(f"error: not published: Redis at {redacted_url(config.redis_url)}: {error}; "
              "each server and worker publishes it when it reloads its keys",
              file=sys.stderr)
        return 1
    print("published at GET /keys; send SIGHUP to (or restart) every `referee serve` and "
          "`referee worker` to sign with it")
    return 0
