"""Worker CPU a decision, this tree against another commit, in alternating turns: how a
change to the decision's path is judged (docs/performance.md §10). The machine's speed
drifts by 10–20% from one batch of runs to the next, more than most changes move the
figure; alternating the versions on the same bots spreads that drift over both.

    python3 bench/cpu_ab.py [--against HEAD] [--pairs 3] [--tournaments 3] [--rounds 4]
                            [--sdk-bot]

The figure is `bench/execution.py`'s first: 2 worker processes, a round-robin of 4 bots
taking 20 ms (the same `bench/slow_bot.py --lean` process for both versions; `--sdk-bot`:
the SDK's threaded server instead, execution.py's second line), CPU seconds of the worker
processes / decisions. Each turn starts one version whole (its own redis-server,
`referee serve` and 2 `referee worker`s from its own source tree; the other commit's
checked out with `git worktree`) and plays `--tournaments` round-robins in a row on the
same workers (the first one warms them up). Each line also gives the workers' voluntary
and involuntary context switches a decision (their threads' counts in /proc: the wake-ups,
and the preemptions by the processes their writes wake). `--against HEAD` on a tree
without changes measures the noise itself.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import tempfile
from pathlib import Path

import _support
from execution import Stack

from referee.processes import stop_all

THIS = "this tree"  # no commit is named so: a space


def switches(pids: list[int]) -> tuple[int, int]:
    """Voluntary and involuntary context switches of the processes' threads so far."""
    voluntary = involuntary = 0
    for pid in pids:
        for status in Path(f"/proc/{pid}/task").glob("*/status"):
            try:
                lines = status.read_text().splitlines()
            except OSError:  # the thread ended
                continue
            counts = dict(line.split(":\t") for line in lines if "ctxt_switches" in line)
            voluntary += int(counts["voluntary_ctxt_switches"])
            involuntary += int(counts["nonvoluntary_ctxt_switches"])
    return voluntary, involuntary


def turn(label: str, root: Path, bot_url: str, tournaments: int, rounds: int) -> list[float]:
    """One version's tournaments in a row on the same 2 workers: CPU ms a decision each."""
    figures = []
    with _support.redis_server() as server:
        stack = Stack(label, root, server)
        try:
            bots = stack.bots([bot_url] * 4)
            pids = [worker.pid for worker in stack.start_workers(2)]
            for _ in range(tournaments):
                cpu = [_support.cpu_seconds(pid) for pid in pids]
                counted = switches(pids)
                _, view = stack.tournament(bots, rounds, timeout=300)
                used = sum(_support.cpu_seconds(pid) - b for pid, b in zip(pids, cpu,
                                                                            strict=True))
                voluntary, involuntary = (after - before for after, before
                                          in zip(switches(pids), counted, strict=True))
                decisions = sum(stack.call("GET", f"/matches/{m}")["step"]
                                for m in view["matches"])
                figures.append(used / decisions * 1000)
                print(f"  {label:>12}: {figures[-1]:.3f} CPU ms/decision ({decisions} "
                      f"decisions; vol {voluntary / decisions:.2f} inv "
                      f"{involuntary / decisions:.2f} a decision; {_support.load()})",
                      flush=True)
            stack.stop_workers()
        finally:
            stack.close()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--against", default="HEAD", help="the commit to compare with")
    parser.add_argument("--pairs", type=int, default=3, help="turns of each version")
    parser.add_argument("--tournaments", type=int, default=3, help="tournaments a turn")
    parser.add_argument("--rounds", type=int, default=4, help="rounds a tournament")
    parser.add_argument("--sdk-bot", action="store_true",
                        help="the SDK's threaded bot server instead of the lean one")
    parser.add_argument("--quick", action="store_true", help="one short turn each (smoke test)")
    args = parser.parse_args()
    if min(args.pairs, args.tournaments, args.rounds) < 1:
        parser.error("--pairs, --tournaments and --rounds must be at least 1")
    if args.quick:
        args.pairs, args.tournaments, args.rounds = 1, 1, 1
    _support.header(f"worker CPU a decision, this tree against {args.against}, alternating",
                    "CPU <= 0.5 ms/decision (issue 31); a change is judged by the "
                    "difference of the means, against the spread of each")
    figures: dict[str, list[float]] = {THIS: [], args.against: []}
    bot_url, bot = _support.start_slow_bot(20.0, *([] if args.sdk_bot else ["--lean"]))
    try:
        with tempfile.TemporaryDirectory(prefix="bench-cpu-ab-") as scratch:
            other = Path(scratch) / "other"
            added = subprocess.run(["git", "worktree", "add", "--detach", str(other),
                                    args.against], cwd=_support.ROOT, capture_output=True,
                                   text=True)
            if added.returncode:
                raise SystemExit(f"{args.against}: no tree to compare with "
                                 f"({added.stderr.strip()})")
            try:
                for index in range(args.pairs):
                    print(f"turn {index + 1}", flush=True)
                    for label, root in ((THIS, _support.ROOT), (args.against, other)):
                        figures[label] += turn(label, root, bot_url, args.tournaments,
                                               args.rounds)
            finally:
                subprocess.run(["git", "worktree", "remove", "--force", str(other)],
                               cwd=_support.ROOT, capture_output=True)
    finally:
        stop_all([bot])
    print("\nmean CPU ms/decision")
    for label, values in figures.items():
        print(f"  {label:>12}: {statistics.fmean(values):.3f} ({len(values)} tournaments, "
              f"{min(values):.3f}–{max(values):.3f})")
    this, then = (statistics.fmean(values) for values in figures.values())
    print(f"difference: {(this / then - 1) * 100:+.1f}% ({THIS} against {args.against})")


if __name__ == "__main__":
    main()
