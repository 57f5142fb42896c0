"""One definition of a bad action: `apply` raises InvalidAction exactly when the game's
published action schema rejects the action (checked with jsonschema, an independent
validator), IllegalAction for a well-formed action against the rules, and never anything
but an EngineError, whatever JSON a bot sends (issue 15, items 3 and 5; issue 14, items
3 and 4)."""

from __future__ import annotations

import json
import random
from functools import cache

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

import engines

GAMES = [engines.get(name) for name in engines.names()]
HUGE = [2**53, 2**63 - 1, 2**63, 2**64 - 1, 2**64, -(2**64), 10**400, -(10**400)]
SCALARS = (st.none() | st.booleans() | st.integers() | st.sampled_from(HUGE)
           | st.floats(allow_nan=False) | st.text(max_size=10))
ANY_JSON = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                 max_size=4),
    max_leaves=20)


def validator(game: engines.Game) -> Draft202012Validator:
    return Draft202012Validator(game.describe()["action_schema"])


@cache
def sample_states(name: str) -> list[dict]:
    """States of one random playout per setup: every phase and decision kind shows up."""
    game = engines.get(name)
    states = []
    for variant in game.variants():
        chooser = random.Random(variant["num_players"])
        state = game.new_game(variant["num_players"], 40 + variant["num_players"],
                              variant["options"])
        while not game.is_over(state):
            states.append(state)
            state = game.apply(state, chooser.choice(game.legal_actions(state)))
        states.append(state)
    return states[::3] + [states[-1]]


# ----- actions: valid ones drawn from the schema, near misses, arbitrary JSON -------------------
def valid_value(schema: dict) -> st.SearchStrategy:
    """Values the schema accepts (the subset of JSON Schema the games use)."""
    if "const" in schema:
        return st.just(schema["const"])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    kind = schema["type"]
    if kind == "integer":
        whole = st.integers(schema["minimum"], min(schema["maximum"], schema["minimum"] + 50))
        return whole | whole.map(float)
    if kind == "boolean":
        return st.booleans()
    if kind == "array" and "prefixItems" in schema:
        return st.tuples(*map(valid_value, schema["prefixItems"])).map(list)
    if kind == "array":
        return st.lists(valid_value(schema["items"]), min_size=schema.get("minItems", 0),
                        max_size=min(schema["maxItems"], 5),
                        unique_by=(lambda v: orjson.dumps(v)) if schema.get("uniqueItems")
                        else None)
    return valid_object(schema)


def valid_object(schema: dict) -> st.SearchStrategy:
    required = set(schema["required"])
    return st.fixed_dictionaries(
        {key: valid_value(sub) for key, sub in schema["properties"].items() if key in required},
        optional={key: valid_value(sub) for key, sub in schema["properties"].items()
                  if key not in required})


def near_miss(branch: dict) -> st.SearchStrategy:
    """A valid action of one type with one part broken: a field replaced by arbitrary JSON,
    a field dropped, or a key added."""
    valid = valid_object(branch)
    keys = [key for key in branch["properties"] if key != "type"]

    def broken(action: dict, how: str, key: str, value: object) -> dict:
        action = dict(action)
        if how == "replace":
            action[key] = value
        elif how == "drop":
            action.pop(key, None)
        else:
            action[f"x{key}"] = value
        return action

    return st.builds(broken, valid, st.sampled_from(["replace", "drop", "add"]),
                     st.sampled_from(keys or ["type"]), ANY_JSON)


def actions_for(game: engines.Game) -> st.SearchStrategy:
    branches = game.describe()["action_schema"]["oneOf"]
    return st.one_of(
        st.sampled_from(branches).flatmap(valid_object),
        st.sampled_from(branches).flatmap(near_miss),
        st.dictionaries(st.sampled_from(["type", *{k for b in branches for k in b["properties"]}]),
                        ANY_JSON, max_size=4),
        ANY_JSON,
    )


def outcome(game: engines.Game, state: dict, action: object) -> tuple[str, str]:
    """How apply ends: ("ok", the new state as JSON), or the error class and its reason.
    Any other exception fails the test."""
    try:
        return "ok", json.dumps(game.apply(state, action), sort_keys=True)
    except engines.InvalidAction as error:
        return "invalid", error.reason
    except engines.IllegalAction as error:
        return "illegal", error.reason


@pytest.mark.parametrize("game", GAMES, ids=engines.names())
def test_apply_refuses_as_malformed_exactly_what_the_schema_refuses(game):
    schema = validator(game)
    states = sample_states(game.name)

    @settings(max_examples=600, deadline=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(state=st.sampled_from(states), action=actions_for(game))
    def check(state, action):
        valid = schema.is_valid(action)
        kind, reason = outcome(game, state, action)
        assert reason
        assert (kind == "invalid") == (not valid), f"{kind} ({reason}) for {action!r}"
        if valid:
            canonical = game.canonical_action(action)
            assert schema.is_valid(canonical)
            assert game.canonical_action(canonical) == canonical
            assert outcome(game, state, canonical) == (kind, reason), \
                "an action and its canonical form apply differently"

    check()


# ----- the attacks of the issues, one by one ----------------------------------------------------
def nested(depth: int) -> object:
    value: object = 0
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize("game", GAMES, ids=engines.names())
def test_deep_nesting_and_huge_integers_are_malformed_not_a_crash(game):
    """Issue 14 item 3 (a junk field nested 300 deep made clone raise orjson's TypeError) and
    issue 15 item 5 (an integer >= 2**64 raised TypeError)."""
    state = sample_states(game.name)[1]
    legal = game.legal_actions(state)[0]
    for junk in (nested(300), 2**64, 10**400, -(2**64)):
        for action in ({**legal, "junk": junk}, junk, {"type": legal["type"], "x": junk}):
            with pytest.raises(engines.InvalidAction):
                game.apply(state, action)
            assert not validator(game).is_valid(action)
    with pytest.raises(engines.InvalidAction, match='has no field "junk"'):
        game.apply(state, {**legal, "junk": nested(5000)})
    integer_fields = [(branch, key) for branch in game.describe()["action_schema"]["oneOf"]
                      for key, sub in branch["properties"].items() if sub.get("type") == "integer"]
    assert integer_fields
    for branch, key in integer_fields:
        for huge in (2**64, 10**400, 2**63, 2**53):
            with pytest.raises(engines.InvalidAction, match=f'field "{key}" must be an integer'):
                game.apply(state, {**smallest(branch), key: huge})


def smallest(schema: dict) -> object:
    """The simplest value the schema accepts."""
    if "const" in schema or "enum" in schema:
        return schema["const"] if "const" in schema else schema["enum"][0]
    kind = schema["type"]
    if kind == "array":
        items = schema.get("prefixItems") or [schema["items"]] * schema.get("minItems", 0)
        return [smallest(item) for item in items]
    if kind == "object":
        return {key: smallest(schema["properties"][key]) for key in schema["required"]}
    return {"integer": schema.get("minimum"), "boolean": False}[kind]


@pytest.mark.parametrize("game", GAMES, ids=engines.names())
def test_junk_keys_are_malformed_and_the_canonical_form_is_what_the_game_defines(game):
    """Issue 14 item 4: an action with keys the game does not define is malformed; the replay
    stores the canonical form (here: 2.0 is the integer 2, the keys in schema order)."""
    for state in sample_states(game.name)[:20]:
        for action in game.legal_actions(state)[:10]:
            with pytest.raises(engines.InvalidAction, match='has no field "comment"'):
                game.apply(state, {**action, "comment": "gg"})
            assert game.canonical_action(action) == action
            assert list(game.canonical_action(dict(reversed(action.items())))) == list(action)
            floated = {key: float(value) if type(value) is int else value
                       for key, value in action.items()}
            canonical = game.canonical_action(floated)
            assert canonical == action and all(
                type(canonical[k]) is type(action[k]) for k in action)
            assert outcome(game, state, floated) == outcome(game, state, action)


def max_json_bytes(schema: dict) -> int:
    """An upper bound of the compact JSON size of any value the schema accepts (numbers such
    as 12.0 or 9.007199254740991e15 take a few characters more than the integer)."""
    if "const" in schema or "enum" in schema:
        values = [schema["const"]] if "const" in schema else schema["enum"]
        return max(len(json.dumps(v, separators=(",", ":"))) for v in values)
    kind = schema["type"]
    if kind == "integer":
        return max(len(str(schema["minimum"])), len(str(schema["maximum"]))) + 6
    if kind == "boolean":
        return len("false")
    if kind == "array":
        sizes = ([max_json_bytes(item) for item in schema["prefixItems"]]
                 if "prefixItems" in schema
                 else [max_json_bytes(schema["items"])] * schema["maxItems"])
        return 2 + sum(sizes) + max(len(sizes) - 1, 0)
    fields = schema["properties"]
    return 2 + sum(len(json.dumps(k)) + 1 + max_json_bytes(v) for k, v in fields.items()) \
        + len(fields) - 1


@pytest.mark.parametrize("game", GAMES, ids=engines.names())
def test_actions_over_the_size_limit_are_malformed_and_no_valid_action_comes_near_it(game):
    """Issue 14 item 4: 900 kB of junk per action made one match 34 MB of Redis; an action
    larger than engines.MAX_ACTION_BYTES (16 KiB) is malformed, and every schema-valid action
    is far below that limit (under 2 KiB)."""
    assert engines.MAX_ACTION_BYTES == 16384
    state = sample_states(game.name)[1]
    legal = game.legal_actions(state)[0]
    room = engines.MAX_ACTION_BYTES - len(orjson.dumps({**legal, "junk": ""}))
    with pytest.raises(engines.InvalidAction, match="has no field"):
        game.apply(state, {**legal, "junk": "x" * room})
    with pytest.raises(engines.InvalidAction, match="the limit is 16384"):
        game.apply(state, {**legal, "junk": "x" * (room + 1)})
    with pytest.raises(engines.InvalidAction, match="the limit is 16384"):
        game.apply(state, {"type": legal["type"], "pad": ["x" * 1000] * 900})
    for branch in game.describe()["action_schema"]["oneOf"]:
        assert max_json_bytes(branch) < 2048, branch["title"]


def as_sent(action: dict, chooser: random.Random) -> dict:
    """The same action as a client might send it: keys in another order, integers as
    integral floats (2.0) here and there."""
    items = list(action.items())
    chooser.shuffle(items)
    return {key: float(value) if type(value) is int and chooser.random() < 0.5 else value
            for key, value in items}


@pytest.mark.parametrize("game", GAMES, ids=engines.names())
def test_a_match_replays_the_same_from_raw_or_canonical_actions(game):
    """Issue 14 item 4: the replay stores the canonical action; re-running a match from the
    actions as they were sent or from their canonical forms gives the same state at every
    step."""
    for variant in game.variants():
        chooser = random.Random(7)
        raw, canonical = [], []
        state = game.new_game(variant["num_players"], 7, variant["options"])
        while not game.is_over(state):
            sent = as_sent(chooser.choice(game.legal_actions(state)), chooser)
            raw.append(sent)
            canonical.append(game.canonical_action(sent))
            state = game.apply(state, sent)
        assert any(json.dumps(a) != json.dumps(c) for a, c in zip(raw, canonical, strict=True))
        assert all(json.dumps(c) == json.dumps(game.canonical_action(c)) for c in canonical)
        replays = []
        for actions in (raw, canonical):
            state = game.new_game(variant["num_players"], 7, variant["options"])
            states = [json.dumps(state, sort_keys=True)]
            for action in actions:
                state = game.apply(state, action)
                states.append(json.dumps(state, sort_keys=True))
            replays.append(states)
        assert replays[0] == replays[1]
