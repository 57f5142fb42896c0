"""Search bots (issue 30): the information-set MCTS bot (bots/python/ismcts_bot.py) against
the greedy bots. Goals: `referee sprt --bot <ismcts> --bot <greedy>` (elo0 0, elo1 50)
accepts H1 in every 2-player setup, and the ISMCTS bot heads the solo ranking (Aldabas solo:
the same SPRT with both bots on every deal, ranked by mean score at its end).

    python3 bench/search_bots.py [--setups aladino,aldabas,caravans,solo]
                                 [--move-ms aladino=800,aldabas=300,caravans=300,solo=300]
                                 [--max-matches 400] [--quick]

Per setup: one redis-server, `referee serve`, one `referee worker` driving one match at a
time (REFEREE_WORKER_CONCURRENCY=1: the search has a core, the greedy bot, the worker and
the server share the other), and the two bots as processes on loopback, registered by URL
(POST /bots): `python3 -m bots.python.ismcts_bot --move-ms M` (M: the setup's time per
move) and `python3 -m bots.python.<game>_bot`. Then the command
`referee sprt --game G --bot ISMCTS --bot GREEDY --elo0 0 --elo1 50 --concurrency 2
--seed 1 --deadline-ms 2000` (solo: `--players 1 --options '{"mode": "solo"}'`), its lines
printed as they come; at its end the tournament's SPRT summary, the ISMCTS bot's
standing, the iterations it made per move (from its answers' `info` in the replays) and,
solo, the ranking.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import time

import _support

from referee.client import Client
from referee.processes import python_module, stop_all
from referee.redis_server import free_port

ADMIN_TOKEN = "bench-admin-token"
ELO0, ELO1 = 0.0, 50.0
SETUPS = {"aladino": ("aladino", 2, {}), "aldabas": ("aldabas", 2, {}),
          "caravans": ("caravans", 2, {}), "solo": ("aldabas", 1, {"mode": "solo"})}
QUICK_SETUPS = ("caravans", "solo")
"""The smoke test's: one 2-player SPRT and the solo ranking."""
MOVE_MS = {"aladino": 800.0, "aldabas": 300.0, "caravans": 300.0, "solo": 300.0}
DEADLINE_MS = 2000


def move_times(text: str) -> dict[str, float]:
    """`--move-ms`: "setup=ms,..." over the defaults."""
    given = dict(pair.split("=") for pair in text.split(",") if pair)
    return {**MOVE_MS, **{setup: float(ms) for setup, ms in given.items()}}


def start_stack(redis_url: str) -> tuple[str, list]:
    """`referee serve` and one single-match `referee worker`: (base URL, processes)."""
    env = _support.child_env(REDIS_URL=redis_url, REFEREE_SECRET="bench",
                             REFEREE_ADMIN_TOKEN=ADMIN_TOKEN, REFEREE_WORKER_CONCURRENCY="1")
    port = free_port()
    server = _support.start(python_module("referee.cli", "serve", "--port", str(port)), port,
                            env=env)
    worker = _support.start(python_module("referee.cli", "worker"), env=env)
    return f"http://127.0.0.1:{port}", [server, worker]


def sprt_command(base: str, setup: str, bots: list[str], max_matches: int) -> list[str]:
    game, players, options = SETUPS[setup]
    return python_module(
        "referee.cli", "sprt", "--server", base, "--game", game, "--bot", bots[0], "--bot",
        bots[1], "--elo0", str(ELO0), "--elo1", str(ELO1), "--max-matches", str(max_matches),
        "--concurrency", "2", "--seed", "1", "--deadline-ms", str(DEADLINE_MS), "--poll", "2",
        "--players", str(players), "--options", json.dumps(options))


def run_sprt(command: list[str]) -> str:
    """The `referee sprt` command to its end, its lines printed as they come: the
    tournament's id."""
    print(f"  $ referee {' '.join(command[3:])}", flush=True)
    with subprocess.Popen(command, env=dict(os.environ, REFEREE_ADMIN_TOKEN=ADMIN_TOKEN),
                          cwd=_support.ROOT, stdout=subprocess.PIPE, text=True) as sprt:
        assert sprt.stdout is not None
        lines = []
        for line in sprt.stdout:
            lines.append(line)
            print(f"  {line.rstrip()}", flush=True)
    if sprt.returncode != 0 or not lines:
        raise RuntimeError(f"referee sprt failed with status {sprt.returncode}")
    return lines[0].split()[1].rstrip(":")


def iterations_per_move(client: Client, match_ids: list[str], seat_bot: str) -> list[int]:
    """The ISMCTS bot's iterations on each of its searched moves (its answers' `info`)."""
    counts = []
    for match_id in match_ids:
        replay = client.get(f"/matches/{match_id}/replay")
        seats = [seat["bot_id"] for seat in replay["seats"]]
        counts += [step["info"]["iterations"] for step in replay["steps"]
                   if seats[step["seat"]] == seat_bot and step.get("info", {}).get("iterations")]
    return counts


def report(client: Client, tournament_id: str, ismcts: str, move_ms: float, spent: float,
           setup: str) -> None:
    """The figures of one finished SPRT."""
    view = client.get(f"/tournaments/{tournament_id}")
    test = view["sprt"]
    standing = next(row for row in view["standings"] if row["bot_id"] == ismcts)
    iterations = iterations_per_move(client, view["matches"], ismcts)
    print(f"{setup} ({move_ms:g} ms a move): decision {test['decision']}, LLR "
          f"{test['llr']:.2f} ({test['lower']:.2f}, {test['upper']:.2f}), Elo "
          f"{test['elo']:.1f} [{test['elo_low']:.1f}, {test['elo_high']:.1f}], "
          f"{test['games']} games, pentanomial {test['pentanomial']}; ismcts mean score "
          f"{standing['average_score']:.2f}, faults {standing['faults']}; iterations a move "
          f"median {statistics.median(iterations) if iterations else 0:g} "
          f"({len(iterations)} searched moves); {spent / 60:.1f} min, {_support.load()}")
    for place, row in enumerate(view["solo_ranking"] or [], 1):
        interval = "" if row["low"] is None else f" [{row['low']:.2f}, {row['high']:.2f}]"
        print(f"  solo ranking {place}: {row['name']}, mean score {row['mean']:.2f}"
              f"{interval} over {row['games']} games")


def run_setup(base: str, setup: str, move_ms: float, max_matches: int) -> None:
    game = SETUPS[setup][0]
    client = Client(base, ADMIN_TOKEN)
    bots = [_support.start_bot("bots.python.ismcts_bot", "--move-ms", str(move_ms),
                               "--seed", "1"),
            _support.start_bot(f"bots.python.{game}_bot")]
    try:
        ids = [client.post("/bots", {"name": f"{name}-{setup}", "url": url, "games": [game]}
                           )["id"] for name, (url, _) in zip(("ismcts", "greedy"), bots,
                                                             strict=True)]
        started = time.perf_counter()
        tournament_id = run_sprt(sprt_command(base, setup, ids, max_matches))
        report(client, tournament_id, ids[0], move_ms, _support.elapsed(started), setup)
    finally:
        stop_all([process for _, process in bots])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--setups", default=None,
                        help="of " + ", ".join(SETUPS) + " (default: all; --quick: "
                        + ", ".join(QUICK_SETUPS) + ")")
    parser.add_argument("--move-ms", type=move_times, default=MOVE_MS,
                        help="the search's time per decision, per setup: setup=ms,...")
    parser.add_argument("--max-matches", type=int, default=400)
    parser.add_argument("--quick", action="store_true", help="a tiny run (smoke test)")
    args = parser.parse_args()
    if args.quick:
        args.move_ms, args.max_matches = dict.fromkeys(MOVE_MS, 20.0), 2
    chosen = args.setups or ",".join(QUICK_SETUPS if args.quick else SETUPS)
    setups = [setup for setup in chosen.split(",") if setup]
    times = ", ".join(f"{setup} {args.move_ms[setup]:g}" for setup in setups)
    _support.header(f"ISMCTS (ms a move: {times}) against the greedy bots",
                    f"SPRT [{ELO0:g}, {ELO1:g}] accepts H1 in every 2-player setup; "
                    "ISMCTS first in the solo ranking")
    with _support.redis_server() as redis_server:
        base, stack = start_stack(redis_server.url)
        try:
            for setup in setups:
                run_setup(base, setup, args.move_ms[setup], args.max_matches)
        finally:
            stop_all(stack)


if __name__ == "__main__":
    main()
