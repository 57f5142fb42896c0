"""Replays through the API and the CLI: download, step-through per seat, verification; a
running match's replay is the admin's only, and a malformed replay is a 400 naming the
field."""

from __future__ import annotations

import subprocess
import sys

import orjson
import pytest

import engines
from referee.match import replay
from referee.match.runner import FailurePolicy, PushSeat, run_match
from tests.support.apitest import ADMIN, ROOT, sealer_of_tests, two_player_options


@pytest.fixture
def finished(api, bot_server, run_worker):
    """Play one bot match per game on a real worker; answer {game: (match_id, record)}."""
    bot = api.register_bot(bot_server.url("/random"))
    ids = {}
    for game in engines.names():
        ids[game] = api.create_match(game, [{"kind": "bot", "bot_id": bot}] * 2, seed=31,
                                     options=two_player_options(game))["id"]
    run_worker()
    out = {}
    for game, match_id in ids.items():
        response = api.get(f"/matches/{match_id}/replay")
        assert response.headers["Content-Disposition"] == (
            f'attachment; filename="{match_id}.replay.json"')
        out[game] = (match_id, response.get_json())
    return out


def sent_observations(bot_server, match_id: str) -> dict[int, dict]:
    return {p["step"]: p for p in bot_server.received["/random"] if p["match_id"] == match_id}


def test_every_step_as_every_seat_and_as_a_spectator(api, bot_server, finished):
    for game, (match_id, record) in finished.items():
        sent = sent_observations(bot_server, match_id)
        assert set(sent) == set(range(len(record["steps"])))
        for seat in range(record["num_players"]):
            for step in range(len(record["steps"]) + 1):
                body = api.get(f"/matches/{match_id}/replay/{step}?seat={seat}").get_json()
                assert body["view"]["seat"] == seat and body["step"] == step
                if step < len(record["steps"]):
                    if record["steps"][step]["seat"] == seat:
                        assert body["view"] == sent[step]["observation"], (game, step)
                        assert without_events(body["played"]) == record["steps"][step]
                else:
                    assert body["played"] is None and body["to_move"] is None
        spectator = api.get(f"/matches/{match_id}/replay/3").get_json()
        assert spectator["seat"] is None and spectator["view"]["seat"] is None
        assert spectator["view"]["legal_actions"] == []
        end = len(record["steps"])
        assert api.get(f"/matches/{match_id}/replay/{end + 1}").status_code == 404
        assert api.get(f"/matches/{match_id}/replay/0?seat=2").status_code == 404


def without_events(played: dict) -> dict:
    return {key: value for key, value in played.items() if key != "events"}


def step_views(api, match_id: str, steps: int, seat: int | None) -> list[dict]:
    query = "" if seat is None else f"?seat={seat}"
    return [api.get(f"/matches/{match_id}/replay/{step}{query}").get_json()
            for step in range(steps + 1)]


def test_a_seat_sees_other_seats_moves_only_as_its_own_log_shows_them(api, finished):
    """Issue 15.2: the mover sees its step whole; every other seat and the spectator see
    no action, only the events the step added to their own log (the entries their view
    of the next step shows), and of a fault its code and policy."""
    for game, (match_id, record) in finished.items():
        steps = record["steps"]
        for seat in [*range(record["num_players"]), None]:
            views = step_views(api, match_id, len(steps), seat)
            for index, step in enumerate(steps):
                played, before, after = (views[index]["played"], views[index]["view"],
                                         views[index + 1]["view"])
                assert played["events"] == after["log"][len(before["log"]):], (game, index)
                assert {k: played[k] for k in ("step", "seat", "elapsed_ms", "state_hash")} == {
                    k: step[k] for k in ("step", "seat", "elapsed_ms", "state_hash")}
                if seat == step["seat"]:
                    assert (played["action"], played["fault"]) == (step["action"], step["fault"])
                else:
                    assert played["action"] is None, (game, index, seat)
                    fault = step["fault"]
                    assert played["fault"] == (fault and {"code": fault["code"],
                                                          "policy": fault["policy"]})


def test_another_seats_aldabas_vault_door_stays_hidden(api, finished):
    """The issue's example: seat 0's setup_vault card is in seat 0's view of the step,
    and nowhere in seat 1's or the spectator's, which show the public event only."""
    match_id, record = finished["aldabas"]
    index = next(i for i, s in enumerate(record["steps"])
                 if s["seat"] == 0 and s["action"]["type"] == "setup_vault")
    card = record["steps"][index]["action"]["card"]
    url = f"/matches/{match_id}/replay/{index}"
    own = api.get(f"{url}?seat=0").get_json()["played"]
    assert own["action"] == {"type": "setup_vault", "card": card}
    assert own["events"] == [{"event": "setup_vault", "seat": 0, "card": card}]
    for other in (api.get(f"{url}?seat=1").get_json(), api.get(url).get_json()):
        assert other["played"]["action"] is None
        assert other["played"]["events"] == [{"event": "setup_vault", "seat": 0}]


def test_a_live_match_is_stepped_through_by_the_admin_only(api):
    match = api.create_match("aladino", [{"kind": "pull"}, {"kind": "pull"}], seed=2)
    url = f"/matches/{match['id']}/replay/0?seat=0"
    assert api.get(url).status_code == 401
    assert api.get(url, token=ADMIN).get_json()["view"]["seat"] == 0


def test_downloaded_replays_verify_through_the_api(api, finished):
    for _, record in finished.values():
        assert record["signature"] == {**record["signature"], "algorithm": "ed25519",
                                       "key_id": sealer_of_tests().key_id}
        report = api.post("/replays/verify", json=record).get_json()
        assert report["valid"] and report["signature"] == "valid" and report["chain"] == "valid"
        assert report["steps_checked"] == len(record["steps"])
    _, record = finished["aladino"]
    record["result"]["scores"][1] += 5
    report = api.post("/replays/verify", json=record).get_json()
    assert not report["valid"] and report["problem"]["field"] == "result.scores"
    record["game_version"] = "0.0.1"
    refused = api.post("/replays/verify", json=record)
    assert refused.status_code == 422 and "version '0.0.1'" in refused.get_json()["detail"]
    del record["steps"]
    assert "steps" in api.post("/replays/verify", json=record).get_json()["errors"]
    assert api.post("/replays/verify", json=[1, 2]).status_code == 400


def verify_cli(path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "referee.cli", "verify", str(path), *extra],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)


def test_referee_verify_checks_a_downloaded_file_offline(api, finished, tmp_path):
    _, record = finished["caravans"]
    path = tmp_path / "match.replay.json"
    path.write_bytes(orjson.dumps(record))
    keys = tmp_path / "keys.json"
    keys.write_bytes(api.get("/keys").get_data())
    good = verify_cli(path, "--keys", str(keys))
    assert good.returncode == 0 and good.stdout.rstrip().endswith("VALID")
    assert "signature: valid" in good.stdout
    unchecked = verify_cli(path)
    assert unchecked.returncode == 0 and "no key given" in unchecked.stdout
    record["steps"][2]["state_hash"] = "0" * 64
    path.write_bytes(orjson.dumps(record))
    bad = verify_cli(path, "--keys", str(keys))
    assert bad.returncode == 1 and "step 2, state_hash" in bad.stdout
    record["game_version"] = "9"
    path.write_bytes(orjson.dumps(record))
    other = verify_cli(path, "--keys", str(keys))
    assert other.returncode == 2 and "version '9'" in other.stderr


def test_a_live_replay_is_for_the_admin_only(api):
    match = api.create_match("aladino", [{"kind": "pull"}, {"kind": "pull"}], seed=5)
    url = f"/matches/{match['id']}/replay"
    assert api.get(url).status_code == 401
    assert api.get(url, token=match["tokens"][0]["token"]).status_code == 403
    record = api.get(url, token=ADMIN).get_json()
    assert record["steps"] == [] and record["result"] is None and record["seed"] == 5


@pytest.fixture
def sealed_record(bot_server) -> dict:
    seats = [PushSeat(bot_server.url("/first")) for _ in range(2)]
    record = run_match("aladino", 3, {}, seats, FailurePolicy(), "m-api")
    return replay.seal(record, sealer_of_tests())


@pytest.mark.parametrize("change, path", [
    (lambda r: r.update(initial_state_hash="zz"), ["initial_state_hash"]),
    (lambda r: r["steps"][0].update(elapsed_ms="slow"), ["steps", "0", "elapsed_ms"]),
    (lambda r: r["signature"].update(value="é"), ["signature", "value"]),
    (lambda r: r["chain"].update(head="é" * 64), ["chain", "head"]),
    (lambda r: r.update(seed="5"), ["seed"]),
])
def test_a_malformed_replay_is_a_400_naming_the_field(api, sealed_record, change, path):
    change(sealed_record)
    response = api.post("/replays/verify", json=sealed_record)
    assert response.status_code == 400
    errors = response.get_json()["errors"]
    for key in path:
        errors = errors[key]
    assert errors
