"""The referee API as its command-line clients use it (`referee tournament`, `referee demo`):
JSON calls with the admin token, following a tournament with a progress bar, plain tables."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable

import requests
from tqdm import tqdm

from referee.errors import RefereeError
from referee.match.botclient import DEFAULT_DEADLINE_MS
from referee.match.clock import TimeControl, TimeControlError

Column = tuple[str, str, int, int | None]  # heading, key, width, decimals (None: text)
BOT = ("bot", "name", 24, None)
RATING_COLUMNS: list[Column] = [BOT, ("rating", "rating", 7, 0), ("low", "low", 7, 0),
                                ("high", "high", 7, 0), ("games", "games", 5, 0)]


DEFAULT_SERVER = "http://127.0.0.1:8000"


def add_run_arguments(parser: argparse.ArgumentParser, what: str, policies: tuple[str, ...],
                      default_policy: str) -> None:
    """The arguments every command that starts matches on a server shares: the bots'
    deadline, the failure policy, a name for `what`, the server and the polling period."""
    parser.add_argument("--deadline-ms", type=int, default=DEFAULT_DEADLINE_MS,
                        help="per decision of a bot")
    parser.add_argument("--policy", choices=policies, default=default_policy,
                        help="what every fault costs: forfeit the match, or a random move")
    parser.add_argument("--time-control", type=time_control_argument, metavar="BASE+INC",
                        help="play every match on a clock: BASE+INCREMENT in ms (2000+100), "
                             "or the JSON object of the API; then --deadline-ms is not used")
    parser.add_argument("--name", help=f"a name for the {what}")
    parser.add_argument("--server", default=os.environ.get("REFEREE_URL", DEFAULT_SERVER),
                        help=f"the referee's base URL (default: REFEREE_URL or {DEFAULT_SERVER})")
    parser.add_argument("--poll", type=float, default=0.5, help="seconds between reads")


def time_control_argument(text: str) -> dict:
    """`--time-control` as the API's `time_control` object."""
    try:
        return TimeControl.parse(text).to_dict()
    except TimeControlError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def with_clock(body: dict, args: argparse.Namespace) -> dict:
    """A request body with the `time_control` of `--time-control`, when given."""
    return {**body, "time_control": args.time_control} if args.time_control else body


def admin_client(server: str) -> Client | None:
    """A client with the admin token of REFEREE_ADMIN_TOKEN; None (said on stderr) without."""
    token = os.environ.get("REFEREE_ADMIN_TOKEN")
    if not token:
        print("error: set REFEREE_ADMIN_TOKEN to the server's admin token", file=sys.stderr)
        return None
    return Client(server.rstrip("/"), token)


class ServerError(RefereeError):
    """The referee answered with a problem: its status, detail and field errors."""


def exit_code(client: Client, work: Callable[[], None]) -> int:
    """0 once `work` is done; 1, said in one line on stderr, when the referee refused a
    call or could not be reached."""
    try:
        work()
    except ServerError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    except requests.RequestException as error:
        print(f"error: cannot reach the referee at {client.base}: {error}", file=sys.stderr)
        return 1
    return 0


class Client:
    """JSON calls to a referee with the admin token; a problem answer raises ServerError."""

    def __init__(self, base: str, token: str):
        self.base = base.rstrip("/")
        self.session = requests.Session()
        self.session.headers["Authorization"] = f"Bearer {token}"

    def get(self, path: str) -> dict:
        return self._check(self.session.get(self.base + path, timeout=30))

    def get_all(self, path: str, key: str, page: int = 200) -> list[dict]:
        """Every item of a paged list (`key` of each page), a page at a time."""
        items: list[dict] = []
        while True:
            answer = self.get(f"{path}?offset={len(items)}&limit={page}")
            items += answer[key]
            if not answer[key] or len(items) >= answer["total"]:
                return items

    def post(self, path: str, body: dict) -> dict:
        return self._check(self.session.post(self.base + path, json=body, timeout=60))

    def patch(self, path: str, body: dict) -> dict:
        return self._check(self.session.patch(self.base + path, json=body, timeout=60))

    @staticmethod
    def _check(response: requests.Response) -> dict:
        if response.status_code < 400:
            return response.json()
        try:
            problem = response.json()
        except ValueError:
            raise ServerError(f"HTTP {response.status_code}: {response.text[:300]}") from None
        errors = problem.get("errors")
        raise ServerError(f"HTTP {response.status_code} {problem.get('title', '')}: "
                          f"{problem.get('detail', '')}"
                          + (f" {json.dumps(errors)}" if errors else ""))


def follow_tournament(client: Client, view: dict, poll_s: float,
                      on_poll: Callable[[], None] | None = None) -> dict:
    """Read the tournament every `poll_s` seconds until it is over, drawing a progress bar
    (reading it also queues again the matches of workers that died); `on_poll` runs before
    each read."""
    with tqdm(total=view["progress"]["total"], unit="match", file=sys.stderr,
              desc=view["name"][:24]) as bar:
        while True:
            progress = view["progress"]
            bar.update(progress["done"] - bar.n)
            bar.set_postfix(failed=progress["failed"], refresh=False)
            if view["status"] == "finished":
                return view
            time.sleep(poll_s)
            if on_poll:
                on_poll()
            view = client.get(f"/tournaments/{view['id']}")


def print_rows(title: str, rows: list[dict], columns: list[Column]) -> None:
    """A plain text table, one line per row, numbered from 1."""
    print(f"\n{title}")
    print("  #  " + "  ".join(f"{heading:<{width}}" if decimals is None else f"{heading:>{width}}"
                              for heading, _, width, decimals in columns))
    for place, row in enumerate(rows, 1):
        print(f"{place:>3}  " + "  ".join(cell(row[key], width, decimals)
                                          for _, key, width, decimals in columns))


def cell(value: object, width: int, decimals: int | None) -> str:
    if decimals is None:
        return f"{str(value)[:width]:<{width}}"
    if value is None:
        return f"{'-':>{width}}"
    return f"{value:>{width}.{decimals}f}"
