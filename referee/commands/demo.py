"""`referee demo`: the main job. Starts Redis (unless REDIS_URL is set; `--ha`: a primary,
a replica and three Sentinels, which the rest follows through a failover), the API under
gunicorn, two rq workers and the example bots; runs a small tournament of each game with a
progress bar; prints each leaderboard; starts an Aladino ladder of the example bots, which
plays on while the demo runs; where the sandbox can run (root, bubblewrap), makes its
second worker a hosted one and uploads the C random bot as a hosted bot, which plays one
match; prints a link to play Aladino in the browser against the random bot; then serves the
web pages until Ctrl-C."""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import signal
import sys
import time
from pathlib import Path

import requests

from referee import logs
from referee.client import (
    BOT,
    RATING_COLUMNS,
    Client,
    ServerError,
    follow_tournament,
    print_rows,
)
from referee.commands.dashboard import DEFAULT_PORT as DASHBOARD_PORT
from referee.config import Config
from referee.match import sandbox
from referee.match.sealing import append_new_key
from referee.processes import Supervisor, interrupt_on_sigterm, python_module
from referee.redis_server import (
    RedisServer,
    RedisServerError,
    SentinelSet,
    free_port,
    port_is_free,
)

HELP = "the main job: Redis, API, workers and bots, a tournament of each game, leaderboards"

# (game, players, options, rounds): one small tournament each.
TOURNAMENTS: tuple[tuple[str, int, dict[str, str], int], ...] = (
    ("aladino", 2, {}, 4),
    ("aladino", 3, {}, 2),
    ("aldabas", 2, {"mode": "multi"}, 3),
    ("aldabas", 1, {"mode": "solo"}, 10),
    ("caravans", 2, {}, 3),
)
HOSTED_NAME = "random (c, hosted)"
HOSTED_GAME = "aladino"
HOSTED_BUILD_WAIT_S = 90
HEURISTIC_BOTS = {"aladino": "aladino_bot", "aldabas": "aldabas_bot", "caravans": "caravans_bot"}
PLAY_GAME = "aladino"
LADDER_GAME, LADDER_NAME = "aladino", "demo aladino ladder"
PLAY_DEADLINE_MS = 3_600_000  # an hour per move: the match waits for the person, holding no worker


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--port", type=int, default=8000, help="port of the API and pages")
    parser.add_argument("--state-dir", type=Path, default=Path(".state"),
                        help="where the embedded Redis keeps its data, and the logs")
    parser.add_argument("--seed", type=int, default=2026, help="seed of every tournament")
    parser.add_argument("--exit", action="store_true",
                        help="stop everything after printing the leaderboards")
    parser.add_argument("--ha", action="store_true",
                        help="Redis with failover: a primary, a replica and three Sentinels "
                             "(redis-sentinel), data under the state folder; kill the primary "
                             "and watch the rest carry on (docs/operations.md, Redis Sentinel)")


def run(args: argparse.Namespace) -> int:
    logs.configure("demo")
    Config.from_env()  # a bad setting is one line here, not a child that will not start
    state_dir = args.state_dir.resolve()
    env = dict(os.environ)
    token_generated = not env.get("REFEREE_ADMIN_TOKEN")
    if token_generated:
        env["REFEREE_ADMIN_TOKEN"] = secrets.token_urlsafe(24)
    env.setdefault("REFEREE_SECRET", _persistent_secret(state_dir))
    if not env.get("REFEREE_SIGNING_KEY_FILE") and not env.get("REFEREE_HMAC_ONLY"):
        env["REFEREE_SIGNING_KEY_FILE"] = str(_persistent_key_file(state_dir))
    redis_server: RedisServer | SentinelSet | None = None
    supervisor = Supervisor(state_dir / "logs", env)
    previous = interrupt_on_sigterm()
    try:
        if args.ha:
            if env.get("REDIS_URL") or env.get("REDIS_SENTINELS"):
                raise RuntimeError("--ha starts its own Redis: unset REDIS_URL and "
                                   "REDIS_SENTINELS")
            redis_server = SentinelSet(state_dir / "redis-ha").start()
            env["REDIS_URL"] = redis_server.url
            primary = "{}:{}".format(*redis_server.primary())
            print(f"Redis: a primary ({primary}), a replica and three Sentinels at "
                  f"{redis_server.url} (append-only data in {state_dir / 'redis-ha'}); the "
                  f"replica takes over within seconds of the primary's death")
        elif not env.get("REDIS_URL") and not env.get("REDIS_SENTINELS"):
            redis_server = RedisServer(state_dir / "redis", persistent=True).start()
            env["REDIS_URL"] = redis_server.url
            print(f"Redis: embedded redis-server at {redis_server.url} "
                  f"(append-only data in {state_dir / 'redis'})")
        else:
            print("Redis: REDIS_URL (or REDIS_SENTINELS) from the environment")
        base = _start_services(supervisor, args.port)
        _start_dashboard(supervisor, env["REFEREE_ADMIN_TOKEN"] if token_generated else None)
        api = Client(base, env["REFEREE_ADMIN_TOKEN"])
        bots = _register_bots(api, supervisor)
        finished = [_run_tournament(api, supervisor, game, players, options, rounds, args.seed,
                                    bots)
                    for game, players, options, rounds in TOURNAMENTS]
        for game in sorted(HEURISTIC_BOTS):
            _print_leaderboard(api.get(f"/ratings/{game}"))
        for tournament in finished:
            if tournament["solo_ranking"]:
                _print_solo_ranking(tournament)
        print("\nTournament pages:")
        for tournament in finished:
            print(f"  {base}/ui/tournaments/{tournament['id']}  {tournament['name']}")
        ladder = _start_ladder(api, bots[LADDER_GAME])
        print(f"\nA ladder plays on while the demo runs: {base}/ui/ladders/{ladder['id']}")
        print(_hosted_match(api, base, bots[HOSTED_GAME][0]))
        print(f"\nOpen {base}/ui/ — leaderboards, tournaments and replays.")
        print(f"Play {PLAY_GAME} in your browser against the random bot: "
              f"{_ready_match(api, base, bots[PLAY_GAME][0])}")
        if args.exit:
            return 0
        print("Press Ctrl-C to stop everything the demo started.")
        while True:
            supervisor.check_alive()
            time.sleep(1)
    except KeyboardInterrupt:
        print("\nstopping...")
        return 0
    except (RedisServerError, RuntimeError, ServerError, requests.RequestException) as error:
        print(f"demo failed: {error}", file=sys.stderr)
        return 1
    finally:
        signal.signal(signal.SIGTERM, previous)
        supervisor.stop_all()
        if redis_server:
            redis_server.stop()


def _start_services(supervisor: Supervisor, port: int) -> str:
    if not port_is_free(port):
        raise RuntimeError(f"port {port} is already in use: stop what listens there, or choose "
                           "another with --port")
    supervisor.start("api", python_module("referee.cli", "serve", "--port", str(port)), port)
    supervisor.start("worker-1", python_module("referee.cli", "worker"))
    hosted = _sandbox_problem() is None
    supervisor.start("worker-2", python_module("referee.cli", "worker",
                                               *(["--hosted"] if hosted else [])))
    base = f"http://127.0.0.1:{port}"
    print(f"API: gunicorn at {base}; 2 rq workers{' (one hosted)' if hosted else ''}; logs in "
          f"{supervisor.log_dir}")
    return base


def _sandbox_problem() -> str | None:
    """Why hosted bots cannot run here (None: they can)."""
    try:
        sandbox.check_available()
    except sandbox.SandboxUnavailable as error:
        return str(error)
    return None


def _hosted_match(api: Client, base: str, opponent: str) -> str:
    """Upload bots/c/random_bot.c as a hosted bot (found by name on a later run), wait for
    its build, and start one match of it against `opponent`: what to print."""
    problem = _sandbox_problem()
    if problem is not None:
        return f"hosted bots: not on this machine ({problem})"
    source = (Path(__file__).resolve().parents[2] / "bots" / "c" / "random_bot.c").read_text()
    known = {bot["name"]: bot for bot in api.get_all("/bots", "bots")}
    bot = known.get(HOSTED_NAME) or api.post("/bots", {
        "name": HOSTED_NAME, "games": [HOSTED_GAME],
        "source": {"language": "c", "files": {"main.c": source}}})
    deadline = time.monotonic() + HOSTED_BUILD_WAIT_S
    while bot["status"] == "building" and time.monotonic() < deadline:
        time.sleep(0.5)
        bot = api.get(f"/bots/{bot['id']}")
    if bot["status"] != "ready":
        return f"hosted bots: the C bot's build is {bot['status']} (GET /bots/{bot['id']}/build)"
    match = api.post("/matches", {"game": HOSTED_GAME, "seats": [
        {"kind": "bot", "bot_id": bot["id"]}, {"kind": "bot", "bot_id": opponent}]})
    return (f"A hosted bot (bots/c/random_bot.c, built and run in the sandbox) plays: "
            f"{base}/ui/matches/{match['id']}")


def _start_dashboard(supervisor: Supervisor, generated_token: str | None) -> None:
    """rq-dashboard on port 9181 (another free port when it is taken); its password is
    the admin token, shown when the demo made it up."""
    port = DASHBOARD_PORT if port_is_free(DASHBOARD_PORT) else free_port()
    supervisor.start("dashboard", python_module("referee.cli", "dashboard", "--port", str(port)),
                     port)
    password = (f"the admin token {generated_token}" if generated_token
                else "your REFEREE_ADMIN_TOKEN")
    print(f"queue dashboard (rq-dashboard): http://127.0.0.1:{port}/ "
          f"(user admin, password: {password})")


def _register_bots(api: Client, supervisor: Supervisor) -> dict[str, list[str]]:
    """Start the example bots and register them (a bot of an earlier run on the same state
    folder, found by name, gets its new URL: names are unique); the bot ids per game."""
    known = {bot["name"]: bot["id"] for bot in api.get_all("/bots", "bots")}
    games = sorted(HEURISTIC_BOTS)
    specs = [("random (py)", python_module("bots.python.random_bot", "--seed", "1"), games)]
    specs += [(f"{game} greedy (py)", python_module(f"bots.python.{module}"), [game])
              for game, module in HEURISTIC_BOTS.items()]
    if shutil.which("node"):
        script = str(Path(__file__).resolve().parents[2] / "bots" / "node" / "random_bot.js")
        specs.append(("random (node)", ["node", script], games))
    by_game: dict[str, list[str]] = {game: [] for game in games}
    for name, argv, bot_games in specs:
        port = free_port()
        supervisor.start(f"bot-{len(supervisor.children)}", [*argv, "--port", str(port)], port)
        url = f"http://127.0.0.1:{port}/"
        bot = (api.patch(f"/bots/{known[name]}", {"url": url}) if name in known else
               api.post("/bots", {"name": name, "url": url, "games": bot_games}))
        for game in bot_games:
            by_game[game].append(bot["id"])
    print(f"bots: {', '.join(name for name, _, _ in specs)}")
    return by_game


def _run_tournament(api: Client, supervisor: Supervisor, game: str, players: int,
                    options: dict, rounds: int, seed: int, bots: dict[str, list[str]]) -> dict:
    """Start one tournament, show its progress bar until every match is over; return it."""
    label = f"{game} {'solo' if players == 1 else f'{players}p'}"
    created = api.post("/tournaments", {"game": game, "bots": bots[game], "players": players,
                                        "rounds": rounds, "seed": seed, "options": options,
                                        "name": f"demo {label}"})
    return follow_tournament(api, created, 0.5, on_poll=supervisor.check_alive)


def _start_ladder(api: Client, bot_ids: list[str]) -> dict:
    """The demo's ladder (made on the first run, found by name on the next ones), with
    every bot of its game entered: one match at a time, so it leaves the machine to the
    pages."""
    known = [ladder for ladder in api.get_all("/ladders", "ladders")
             if ladder["name"] == LADDER_NAME]
    ladder = known[0] if known else api.post("/ladders", {
        "name": LADDER_NAME, "game": LADDER_GAME, "players": 2, "concurrency": 1})
    for bot_id in bot_ids:
        api.post(f"/ladders/{ladder['id']}/entries", {"bot": bot_id})
    return ladder


def _ready_match(api: Client, base: str, bot_id: str) -> str:
    """A match waiting for a person at seat 0 against `bot_id`: the address of its play
    page, the seat token in the fragment (browsers never send it, so no log shows it)."""
    match = api.post("/matches", {
        "game": PLAY_GAME, "pull_deadline_ms": PLAY_DEADLINE_MS,
        "seats": [{"kind": "pull", "name": "you"}, {"kind": "bot", "bot_id": bot_id}]})
    return f"{base}/ui/play/{match['id']}#token={match['tokens'][0]['token']}"


def _print_leaderboard(board: dict) -> None:
    print_rows(f"Leaderboard — {board['game']} (live Elo, 95% interval)", board["leaderboard"],
               RATING_COLUMNS)


def _print_solo_ranking(tournament: dict) -> None:
    print_rows(f"Solo ranking — {tournament['name']} (average score, 95% interval)",
               tournament["solo_ranking"], [
                   BOT, ("mean", "mean", 7, 1), ("low", "low", 7, 1), ("high", "high", 7, 1),
                   ("games", "games", 5, 0)])


def _persistent_secret(state_dir: Path) -> str:
    """The replay signing key of this state folder, made once, so replays verify later."""
    path = state_dir / "secret"
    if not path.exists():
        state_dir.mkdir(parents=True, exist_ok=True)
        path.write_text(secrets.token_urlsafe(32))
        path.chmod(0o600)
    return path.read_text().strip()


def _persistent_key_file(state_dir: Path) -> Path:
    """The Ed25519 key file of this state folder, made once (`referee keys rotate` adds a
    key to it), so replays keep verifying with the keys at GET /keys."""
    path = state_dir / "signing-keys.pem"
    if not path.exists():
        state_dir.mkdir(parents=True, exist_ok=True)
        append_new_key(path)
    return path
