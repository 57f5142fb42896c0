"""Replay verification speed: how many times faster `referee.match.verify.verify` checks a replay
(re-running every step, every state hash, the chain and the signature) than the original
match took to play. Goal: at least 50 times faster.

    python3 bench/replay_verify_speed.py [--matches 6] [--delay-ms 20] [--quick]

The original matches are played in-process with `run_match` (signed), twice per game
variant: against the SDK random bot (answers at once: the hardest case) and against a bot
that takes `--delay-ms` per move (a bot that thinks).
"""

from __future__ import annotations

import argparse
import time

import _support

import engines
from referee.match import verify as audit
from referee.match.sealing import Sealer, SigningKey, Verifier
from referee.processes import stop_all

GOAL = 50.0
SEALER = Sealer((SigningKey.generate(),))
KEYS = Verifier.of([SEALER.keys[0].public_raw])


def verify_seconds(record: dict) -> float:
    started = time.perf_counter()
    report = audit.verify(record, KEYS)
    spent = _support.elapsed(started)
    if not report.valid:
        raise RuntimeError(f"replay {record['match_id']} did not verify: {report.problem}")
    return spent


def measure(label: str, url: str, matches: int) -> tuple[float, float]:
    print(f"\nbot: {label} ({matches} matches per variant)")
    print(f"{'game':10} {'players':>7} {'steps':>6} {'match ms':>9} {'verify ms':>9} "
          f"{'speed-up':>8}  load")
    total_match = total_verify = 0.0
    for name in engines.names():
        for variant in engines.get(name).variants():
            match_s = verify_s = 0.0
            steps = 0
            for seed in range(matches):
                record, spent = _support.play_match(url, name, variant, seed, SEALER)
                match_s += spent
                verify_s += verify_seconds(record)
                steps += len(record["steps"])
            print(f"{name:10} {variant['num_players']:>7} {steps // matches:>6} "
                  f"{match_s / matches * 1000:>9.1f} {verify_s / matches * 1000:>9.2f} "
                  f"{match_s / verify_s:>7.0f}x  {_support.load()}")
            total_match += match_s
            total_verify += verify_s
    print(f"overall against {label}: {total_match / total_verify:.0f}x (goal >= {GOAL:.0f}x)")
    return total_match, total_verify


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--matches", type=int, default=6, help="matches per game variant")
    parser.add_argument("--delay-ms", type=float, default=20.0,
                        help="time per move of the thinking bot")
    parser.add_argument("--slow-matches", type=int, default=1,
                        help="matches per game variant against the thinking bot")
    parser.add_argument("--quick", action="store_true", help="a tiny run (smoke test)")
    args = parser.parse_args()
    if args.quick:
        args.matches, args.slow_matches, args.delay_ms = 1, 1, 1.0
    _support.header("replay verification speed against the original match time",
                    f"verification at least {GOAL:.0f}x faster than the match")
    url, bot = _support.start_bot("bots.python.random_bot", "--seed", "1")
    slow_url, slow_bot = _support.start_slow_bot(args.delay_ms)
    try:
        measure("SDK random bot (instant answers)", url, args.matches)
        measure(f"random bot taking {args.delay_ms:g} ms per move", slow_url,
                args.slow_matches)
    finally:
        stop_all([bot, slow_bot])


if __name__ == "__main__":
    main()
