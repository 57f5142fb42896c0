"""Every version of every game stays playable: `engines.get(name, version)` replays the
records made with the engines before the one-vocabulary change byte for byte (the replays
and saved states of those versions keep verifying), and the current versions play the same
games, differing only in the vocabulary of the log and of the end of the game."""

from pathlib import Path

import orjson
import pytest
from jsonschema import Draft202012Validator

import engines
from engines.legacy import EarlierVersion
from tests.engines.version_records import load, record_game, state_hash

OLD = {"aladino": "1.0.0", "aldabas": "1.1.0", "caravans": "2"}
NEW = {"aladino": "2.0.0", "aldabas": "2.0.0", "caravans": "3"}
REPLAY_V1 = "replay-v1-aladino.json"
"""A record the referee made with aladino 1.0.0, committed under tests/ (by the referee's
tests: found wherever they keep it)."""


def canonical(value: object) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def records(name: str) -> list[dict]:
    return load(name, OLD[name])


def test_every_game_lists_its_versions_oldest_first_and_plays_each():
    for name in engines.names():
        assert engines.versions(name) == [OLD[name], NEW[name]]
        assert engines.get(name).version == NEW[name]
        assert engines.get(name, version=None) is engines.get(name)
        assert isinstance(engines.get(name, OLD[name]), EarlierVersion)
        assert engines.get(name, OLD[name]).version == OLD[name]


def test_an_unknown_version_is_refused_with_its_own_code():
    with pytest.raises(engines.UnknownVersion, match="versions played: 1.0.0, 2.0.0") as caught:
        engines.get("aladino", "0.9")
    assert caught.value.code == "game/unknown_version"
    assert isinstance(caught.value, engines.UnknownGame)
    with pytest.raises(engines.UnknownGame, match="unknown game"):
        engines.versions("chess")


@pytest.mark.parametrize("name", sorted(OLD))
def test_the_old_version_replays_its_records_byte_for_byte(name):
    """Setup, every state's hash, the result, the final state and the observations."""
    game = engines.get(name, OLD[name])
    for record in records(name):
        again = record_game(game, record["num_players"], record["options"], record["seed"])
        assert again["actions"] == record["actions"]
        assert again["state_hashes"] == record["state_hashes"]
        assert canonical(again) == canonical(record)


@pytest.mark.parametrize("name", sorted(OLD))
def test_old_states_load_and_play_on_in_their_own_version_only(name):
    old, new = engines.get(name, OLD[name]), engines.get(name)
    final = records(name)[0]["final_state"]
    assert canonical(old.to_json(old.from_json(final))) == canonical(final)
    assert old.is_over(final) and old.result(final) == records(name)[0]["result"]
    with pytest.raises(engines.InvalidState, match="version=") as caught:
        new.from_json(final)
    assert caught.value.code == "game/invalid_state"
    with pytest.raises(engines.InvalidState):
        old.from_json(new.new_game(2, 1))


@pytest.mark.parametrize("name", sorted(OLD))
def test_old_observations_fit_the_old_observation_schema(name):
    game = engines.get(name, OLD[name])
    validator = Draft202012Validator(game.describe()["observation_schema"])
    for record in records(name):
        for seen in record["observations"]:
            errors = [e.message[:200] for e in validator.iter_errors(seen["observation"])]
            assert not errors, (seen["step"], seen["seat"], errors[:2])


def test_the_committed_aladino_replay_v1_record_reruns_to_its_hashes():
    """A `referee-replay/1` record: its state hashes are over orjson's sorted-key JSON."""
    path = next(Path(__file__).parents[1].rglob(REPLAY_V1))
    record = orjson.loads(path.read_bytes())
    game = engines.get(record["game"], record["game_version"])
    state = game.new_game(record["num_players"], record["seed"], record["options"])
    assert state_hash(game, state) == record["initial_state_hash"]
    for step in record["steps"]:
        assert game.current_seat(state) == step["seat"]
        state = game.apply(state, step["action"])
        assert state_hash(game, state) == step["state_hash"], step["step"]
    assert game.result(state) == {k: record["result"][k] for k in ("scores", "ranks", "details")}


# ----- the current version: the same games in the new words --------------------------------
CHANGED_EVENTS = {"end", "end_triggered", "game_over"}
CHANGED_KEYS = {"version", "end", "end_trigger", "ending", "end_reason"}


def without_vocabulary(value: dict) -> dict:
    """A state or observation without what the change renamed: the event key is "event",
    and the end records and end events are left out."""
    log = [{("event" if key == "type" else key): v for key, v in entry.items()}
           for entry in value["log"]]
    return {**{k: v for k, v in value.items() if k not in CHANGED_KEYS},
            "log": [entry for entry in log if entry["event"] not in CHANGED_EVENTS]}


def old_end_reason(name: str, state: dict) -> str:
    return {"aladino": lambda: state["end"]["reason"],
            "aldabas": lambda: state["ending"]["reason"],
            "caravans": lambda: state["end_reason"]}[name]()


@pytest.mark.parametrize("name", sorted(OLD))
def test_the_new_version_plays_the_same_games_in_the_new_vocabulary(name):
    game = engines.get(name)
    for record in records(name):
        again = record_game(game, record["num_players"], record["options"], record["seed"])
        assert again["actions"] == record["actions"], "the same legal actions, in order"
        assert {k: again["result"][k] for k in ("scores", "ranks")} == \
               {k: record["result"][k] for k in ("scores", "ranks")}
        final, old_final = again["final_state"], record["final_state"]
        assert without_vocabulary(final) == without_vocabulary(old_final)
        assert final["end"]["reason"] == old_end_reason(name, old_final)
        assert final["log"][-1] == {"event": "end", **final["end"]}
        assert again["result"]["details"]["end"] == final["end"]
        assert all("type" not in entry for entry in final["log"])
        for seen, old_seen in zip(again["observations"], record["observations"], strict=True):
            assert without_vocabulary(seen["observation"]) == \
                   without_vocabulary(old_seen["observation"])
