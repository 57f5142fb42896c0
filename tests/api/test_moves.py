"""Pull seats: matches played entirely through GET .../observation and POST .../actions by
a client holding seat tokens, while a real `referee worker` process runs the match."""

from __future__ import annotations

import random
import time

import pytest
import redis

import engines
from tests.support.apitest import ADMIN, two_player_options
from tests.support.waiting import wait_for

GAMES = engines.names()


@pytest.fixture
def background_worker(workers):
    """Start a waiting `referee worker` in the background, stopped at the end of the test. Not
    `--burst`: a burst worker leaves after a second with nothing queued, which a pull
    match parked between two moves of a slow (loaded) client may well be."""
    return lambda: workers.start_ready(1)[0]


def illegal_action(engine: engines.Game, state: dict) -> tuple[dict, str]:
    """An action the rules refuse in `state` (IllegalAction, not a malformed one), found
    among the actions a random playout from `state` meets later; and the engine's reason."""
    chooser, later, current = random.Random(0), [], state
    while not engine.is_over(current) and len(later) < 2000:
        legal = engine.legal_actions(current)
        later.extend(legal)
        current = engine.apply(current, chooser.choice(legal))
    for action in later:
        try:
            engine.apply(state, action)
        except engines.IllegalAction as error:
            return action, error.reason
        except engines.InvalidAction:
            continue
    raise LookupError("no illegal action found")


def invalid_reason(engine: engines.Game, state: dict, action: dict) -> str:
    """The engine's reason for refusing a malformed action (InvalidAction)."""
    with pytest.raises(engines.InvalidAction) as refused:
        engine.apply(state, action)
    return refused.value.reason


class PullClient:
    """A client for one seat: its token, and the moves it made."""

    def __init__(self, api, match_id: str, token: str):
        self.api, self.match_id, self.token = api, match_id, token
        self.moves = 0

    def observe(self) -> dict:
        response = self.api.get(f"/matches/{self.match_id}/observation", token=self.token)
        assert response.status_code == 200, response.get_json()
        return response.get_json()

    def post(self, body: dict, token: str | None = None):
        return self.api.post(f"/matches/{self.match_id}/actions", json=body,
                             token=self.token if token is None else token)

    def play(self, observation: dict, chooser: random.Random) -> dict:
        action = chooser.choice(observation["legal_actions"])
        response = self.post({"step": observation["step"], "action": action})
        assert response.status_code == 200, response.get_json()
        self.moves += 1
        return response.get_json()


def play_out(clients: dict[int, PullClient], chooser: random.Random,
             limit_s: float = 60) -> None:
    """Each client polls; the one to move plays a random legal action; until the end."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        for seat, client in clients.items():
            observation = client.observe()
            if observation["status"] in ("finished", "failed"):
                return
            if observation["to_move"] == seat:
                accepted = client.play(observation, chooser)
                assert accepted["applied"] and accepted["current_step"] > accepted["step"]
        time.sleep(0.002)
    raise TimeoutError("the match did not finish")


def assert_problem(response, status: int, slug: str | None = None) -> dict:
    body = response.get_json()
    assert response.status_code == status, body
    if slug:
        assert body["type"].endswith(slug), body
    return body


@pytest.mark.parametrize("game", GAMES)
def test_a_pull_match_played_through_the_api(api, redis_url, background_worker, game):
    options = two_player_options(game)
    match = api.create_match(game, [{"kind": "pull", "name": "ann"},
                                    {"kind": "pull", "name": "bob"}],
                             seed=8, options=options, pull_deadline_ms=30000)
    tokens = {t["seat"]: t["token"] for t in match["tokens"]}
    clients = {seat: PullClient(api, match["id"], token) for seat, token in tokens.items()}
    base = f"/matches/{match['id']}"
    first = clients[0].observe()
    mover, other = first["to_move"], 1 - first["to_move"]
    assert first["step"] == 0 and first["status"] == "queued"
    engine = engines.get(game)
    state = engine.new_game(2, 8, options)
    assert first["observation"] == engine.observation(state, 0)
    legal = first["legal_actions"] if mover == 0 else clients[1].observe()["legal_actions"]
    move = {"step": 0, "action": legal[0]}

    assert_problem(api.get(f"{base}/observation"), 401, "auth/missing-token")
    assert_problem(api.get(f"{base}/observation", token="not-a-seat"), 403, "auth/forbidden")
    assert_problem(api.get(f"{base}/observation", token=ADMIN), 403)
    assert_problem(clients[mover].post(move, token=""), 401)
    assert_problem(clients[mover].post(move, token="not-a-seat"), 403)
    assert_problem(clients[other].post(move), 409, "action/out-of-turn")
    assert_problem(clients[mover].post({**move, "step": 1}), 409, "action/stale-step")
    bad, reason = illegal_action(engine, state)
    illegal = assert_problem(clients[mover].post({"step": 0, "action": bad}), 422,
                             "action/illegal")
    assert illegal["detail"] == reason
    for body, field in [({"step": "zero", "action": legal[0]}, "step"),
                        ({"step": 0}, "action"), ({**move, "extra": 1}, "extra")]:
        problem = assert_problem(clients[mover].post(body), 400, "request/invalid")
        assert list(problem["errors"]) == [field], problem
    for action in ({"type": "__nope__"}, {"kind": "no type"}, {**legal[0], "type": 7}):
        reason = invalid_reason(engine, state, action)
        problem = assert_problem(clients[mover].post({"step": 0, "action": action}), 400,
                                 "action/invalid")
        assert problem["detail"] == reason and problem["errors"] == {"action": [reason]}

    background_worker()
    accepted = clients[mover].play(clients[mover].observe(), random.Random(1))
    assert accepted == {"match_id": match["id"], "seat": mover, "step": 0, "applied": True,
                        "status": "running", "current_step": 1,
                        "to_move": accepted["to_move"]}
    assert_problem(clients[mover].post(move), 409)
    play_out(clients, random.Random(2))

    status = api.get(base).get_json()
    record = api.get(f"{base}/replay").get_json()
    assert status["status"] == "finished" and status["result"] == record["result"]
    assert len(record["steps"]) == sum(c.moves for c in clients.values())
    assert all(s["fault"] is None for s in record["steps"])
    assert [s["kind"] for s in record["seats"]] == ["pull", "pull"]
    assert_problem(clients[mover].post(move), 409, "match/over")
    assert clients[0].observe()["to_move"] is None
    assert_no_token_stored(redis_url, list(tokens.values()))


def test_a_pull_seat_may_ask_for_the_log_from_an_entry_on(api, background_worker):
    """`?log_from=k`: the observation's log holds the entries from k on (docs/bots.md, "The
    log since your last decision"); the rest of the view is the whole one's."""
    match = api.create_match("aldabas", [{"kind": "pull", "name": "ann"},
                                         {"kind": "pull", "name": "bob"}],
                             seed=8, pull_deadline_ms=30000)
    clients = {t["seat"]: PullClient(api, match["id"], t["token"]) for t in match["tokens"]}
    background_worker()
    chooser = random.Random(3)
    for _ in range(6):
        for seat, client in clients.items():
            view = client.observe()
            if view["to_move"] == seat:
                client.play(view, chooser)
    base = f"/matches/{match['id']}/observation"
    for client in clients.values():
        whole = client.observe()
        log = whole["observation"]["log"]
        assert len(log) > 2 and "log_from" not in whole
        for start in (1, len(log) // 2, len(log)):
            cut = api.get(f"{base}?log_from={start}", token=client.token).get_json()
            assert cut["log_from"] == start and cut["observation"]["log"] == log[start:]
            assert {**cut, "log_from": None} == {**whole, "log_from": None,
                                                 "observation": {**whole["observation"],
                                                                 "log": log[start:]}}
        ahead = assert_problem(api.get(f"{base}?log_from={len(log) + 1}", token=client.token),
                               409, "observation/log-ahead")
        assert str(len(log)) in ahead["detail"]
        for bad in ("-1", "two", "1.5", str(1 << 53), "9" * 400):
            problem = assert_problem(api.get(f"{base}?log_from={bad}", token=client.token),
                                     400, "request/invalid")
            assert list(problem["errors"]) == ["log_from"]


def assert_no_token_stored(redis_url: str, tokens: list[str]) -> None:
    """No key or value in Redis holds a seat token."""
    client = redis.Redis.from_url(redis_url)
    dump = []
    for key in client.scan_iter():
        kind = client.type(key).decode()
        if kind == "string":
            dump.append(client.get(key))
        elif kind == "hash":
            dump.extend(client.hgetall(key).values())
        elif kind == "list":
            dump.extend(client.lrange(key, 0, -1))
        dump.append(key)
    assert dump and not any(token.encode() in value for value in dump for token in tokens)


def test_a_pull_seat_plays_against_a_bot(api, bot_server, background_worker):
    bot = api.register_bot(bot_server.url("/random"))
    match = api.create_match("aladino", [{"kind": "pull"}, {"kind": "bot", "bot_id": bot}],
                             seed=13, pull_deadline_ms=30000)
    client = PullClient(api, match["id"], match["tokens"][0]["token"])
    background_worker()
    play_out({0: client}, random.Random(3))
    record = api.get(f"/matches/{match['id']}/replay").get_json()
    assert {s["seat"] for s in record["steps"]} == {0, 1} and record["forfeit"] is None
    assert client.moves == sum(1 for s in record["steps"] if s["seat"] == 0)


def test_a_pull_seat_that_never_moves_forfeits_on_timeout(api, bot_server, run_worker):
    bot = api.register_bot(bot_server.url("/random"))
    match = api.create_match("aladino", [{"kind": "pull"}, {"kind": "bot", "bot_id": bot}],
                             seed=13, pull_deadline_ms=300)
    run_worker()
    status = api.get(f"/matches/{match['id']}").get_json()
    assert status["status"] == "finished"
    assert status["forfeit"]["seat"] == 0 and status["forfeit"]["fault"] == "timeout"
    assert status["result"]["ranks"] == [2, 1]


def test_a_pull_seat_given_its_own_deadline_is_told_it_and_held_to_it(api, run_worker):
    match = api.create_match("aladino", [{"kind": "pull", "deadline_ms": 300}, {"kind": "pull"}],
                             seed=13)
    seat_0, seat_1 = (token["token"] for token in match["tokens"])
    observation = api.get(f"/matches/{match['id']}/observation", token=seat_0).get_json()
    assert observation["deadline_ms"] == 300
    other = api.get(f"/matches/{match['id']}/observation", token=seat_1).get_json()
    assert other["deadline_ms"] == match["pull_deadline_ms"] == 300000
    output = run_worker()
    status = api.get(f"/matches/{match['id']}").get_json()
    assert status["forfeit"] == {"seat": 0, "step": 0, "fault": "timeout"}, output


def test_a_move_that_arrives_after_its_deadline_is_a_timeout_however_it_is_taken(
        api, bot_server, workers):
    """A pull seat's move the API takes after the seat's deadline, before anything timed the
    seat out (here its worker died; in a helper's audit, a deadline job a few ms late: 9
    times in 10 at 120 ms for 100 ms), is its timeout at that step, not a move played."""
    bot = api.register_bot(bot_server.url("/random"))
    match = api.create_match("aladino", [{"kind": "pull", "deadline_ms": 1000},
                                         {"kind": "bot", "bot_id": bot}], seed=3)
    client = PullClient(api, match["id"], match["tokens"][0]["token"])
    (worker,) = workers.start_ready(1)
    observation = wait_for(lambda: (seen := client.observe())["status"] == "running"
                           and seen["to_move"] == 0 and seen, what="seat 0 asked")
    workers.kill(worker)  # nothing left to time the seat out
    time.sleep(1.2)  # past the deadline: the seat was asked before the read above
    move = {"step": observation["step"], "action": observation["legal_actions"][0]}
    assert client.post(move).status_code == 200  # taken into the seat's inbox
    workers.start_ready(1)  # takes the match up once the dead worker's lease lapses
    status = wait_for(lambda: (seen := api.get(f"/matches/{match['id']}").get_json())
                      ["status"] == "finished" and seen, what="the match's end")
    assert status["forfeit"] == {"seat": 0, "step": observation["step"],
                                 "fault": "timeout"}, status
