"""Play a pull seat (design.md section 4): for bots that the server cannot call, such as
bots behind NAT. The same `choose` as a push bot polls
`GET /matches/{id}/observation` and answers `POST /matches/{id}/actions` with the seat's
token, until the match is over. The client keeps the log and asks for its new entries only
(`?log_from=`), so a poll costs the same early and late in a match.

    python3 -m bots.python.pull --server http://127.0.0.1:8000 --match m-3f1c... \\
        --token SEAT_TOKEN [--bot aladino_bot]

Standard library only, like the SDK.
"""

from __future__ import annotations

import argparse
import importlib
import json
import time
import urllib.error
import urllib.request

from .sdk import Choose

OVER = ("finished", "failed")
RETRY_STATUSES = (409,)  # out of turn or stale step: the runner has not caught up yet


class RefusedMove(RuntimeError):
    """The server refused a move for a reason that polling again will not fix."""


class PullClient:
    """One seat of one match on a referee server, reached with the seat's token."""

    def __init__(self, server: str, match_id: str, token: str, timeout_s: float = 30.0):
        self.base = f"{server.rstrip('/')}/matches/{match_id}"
        self.token = token
        self.timeout_s = timeout_s
        self.log: list = []  # the seat's log so far

    def observation(self) -> dict:
        """The seat's view, its observation's log whole: the entries not seen yet are
        asked for, the others kept here."""
        try:
            view = self.call("GET", f"/observation?log_from={len(self.log)}")
        except urllib.error.HTTPError as error:
            if error.code != 409:  # 409: fewer entries than kept here: start again
                raise
            self.log = []
            view = self.call("GET", "/observation")
        del self.log[view.get("log_from", 0):]
        self.log.extend(view["observation"]["log"])
        view["observation"]["log"] = list(self.log)
        return view

    def move(self, step: int, action: dict) -> dict:
        return self.call("POST", "/actions", {"step": step, "action": action})

    def match(self) -> dict:
        return self.call("GET", "")

    def call(self, method: str, path: str, body: dict | None = None) -> dict:
        request = urllib.request.Request(
            self.base + path, method=method,
            data=None if body is None else json.dumps(body).encode(),
            headers={"Authorization": f"Bearer {self.token}",
                     "Content-Type": "application/json", "Accept": "application/json"})
        with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
            return json.loads(response.read())


def play_pull(client: PullClient, choose: Choose, poll_s: float = 0.1) -> dict:
    """Answer every decision of the seat until the match is over; returns the match
    (its `status`, `result` and `forfeit`). Raises RefusedMove when a move is refused
    for breaking the rules or for a bad token."""
    while True:
        view = client.observation()
        if view["status"] in OVER:
            return client.match()
        if view["to_move"] != view["seat"]:
            time.sleep(poll_s)
            continue
        action = choose(view["observation"], view["legal_actions"])
        try:
            client.move(view["step"], action)
        except urllib.error.HTTPError as error:
            if error.code not in RETRY_STATUSES:
                raise RefusedMove(f"HTTP {error.code}: {error.read().decode()}") from None
            time.sleep(poll_s)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="play a pull seat with an example bot")
    parser.add_argument("--server", required=True, help="the referee's URL")
    parser.add_argument("--match", required=True, help="the match id")
    parser.add_argument("--token", required=True, help="the seat token from POST /matches")
    parser.add_argument("--bot", default="random_bot", help="bot module, e.g. aladino_bot")
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args(argv)
    make_choose = importlib.import_module(f"{__package__}.{args.bot}").make_choose
    match = play_pull(PullClient(args.server, args.match, args.token), make_choose(args.seed))
    print(json.dumps({key: match.get(key) for key in ("id", "status", "result", "forfeit")}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
