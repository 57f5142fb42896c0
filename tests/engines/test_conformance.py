"""One conformance suite for every registered game, mode and player count (design.md §3)."""

import functools
import json
import random

import orjson
import pytest
from jsonschema import Draft202012Validator

import engines
from engines.base import clone
from engines.rng import Rng

MAX_STEPS = 5000


def _variants():
    for name in engines.names():
        game = engines.get(name)
        for variant in game.variants():
            label = f"{name}-{variant['num_players']}p-" + "-".join(
                f"{k}={v}" for k, v in sorted(variant["options"].items())
            )
            yield pytest.param(game, variant, id=label.rstrip("-"))


VARIANTS = list(_variants())


def _new(game, variant, seed):
    return game.new_game(num_players=variant["num_players"], seed=seed, options=variant["options"])


def _playout(game, variant, seed, chooser_seed=None):
    """Yield every state of one random playout, the final one included."""
    chooser = random.Random(seed if chooser_seed is None else chooser_seed)
    state = _new(game, variant, seed)
    for _ in range(MAX_STEPS):
        yield state
        if game.is_over(state):
            return
        state = game.apply(state, chooser.choice(game.legal_actions(state)))
    pytest.fail(f"{game.name} did not finish in {MAX_STEPS} steps (seed {seed})")


def _canon(value):
    return json.dumps(value, sort_keys=True, allow_nan=False)


def test_every_game_is_registered():
    assert engines.names() == sorted(engines.names())
    assert "aladino" in engines.names()
    with pytest.raises(engines.UnknownGame, match="unknown game"):
        engines.get("chess")


@pytest.mark.parametrize(("game", "variant"), VARIANTS)
def test_describe_is_json_and_complete(game, variant):
    description = game.describe()
    _canon(description)
    for key in ("options", "components", "actions", "action_schema", "observation_schema"):
        assert key in description, f"describe() lacks {key!r}"
    assert game.min_players <= variant["num_players"] <= game.max_players
    assert isinstance(game.version, str) and game.version


@pytest.mark.parametrize("game", [engines.get(name) for name in engines.names()],
                         ids=engines.names())
def test_describe_publishes_draft_2020_12_schemas_of_actions_and_observations(game):
    description = game.describe()
    for key in ("action_schema", "observation_schema"):
        Draft202012Validator.check_schema(description[key])
        assert description[key]["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    branches = description["action_schema"]["oneOf"]
    kinds = [branch["properties"]["type"]["const"] for branch in branches]
    assert list(description["actions"]) == kinds, "the action reference follows the schema"
    for branch in branches:
        assert branch["additionalProperties"] is False and "type" in branch["required"]
        assert description["actions"][branch["title"]] == branch["description"]
    assert description["observation_schema"]["$defs"]["action"]["oneOf"] == branches


class SchemaChecker:
    """Validates observations with the game's published schema; log entries never change
    once logged, so each viewer's log is checked only from where it was last checked."""

    def __init__(self, game: engines.Game):
        description = game.describe()
        self.actions = Draft202012Validator(description["action_schema"])
        self.observations = Draft202012Validator(description["observation_schema"])
        self.logs: dict[int | None, list] = {}

    def check_action(self, action: dict) -> None:
        errors = [error.message for error in self.actions.iter_errors(action)]
        assert not errors, f"the action schema refuses {action}: {errors[:2]}"

    def check_observation(self, observation: dict, viewer: int | None) -> None:
        seen = self.logs.get(viewer, [])
        log = observation["log"]
        assert log[:len(seen)] == seen, "a logged event changed"
        fresh = dict(observation, log=log[len(seen):])
        errors = [f"{error.json_path}: {error.message[:300]}"
                  for error in self.observations.iter_errors(fresh)]
        assert not errors, f"observation of {viewer} does not fit the schema: {errors[:2]}"
        self.logs[viewer] = log


@pytest.mark.parametrize(("game", "variant"), VARIANTS)
def test_every_observation_and_legal_action_fits_the_published_schemas(game, variant):
    """At every step of random playouts: each seat's observation and the spectator's fit the
    observation schema, and the action schema accepts every listed legal action (so
    legal_actions never lists what `apply` would refuse as malformed)."""
    for seed in range(2):
        checker = SchemaChecker(game)
        for state in _playout(game, variant, 500 + seed):
            for action in game.legal_actions(state):
                checker.check_action(action)
                assert game.canonical_action(action) == action, "listed actions are canonical"
            for viewer in [None, *range(game.seats(state))]:
                checker.check_observation(game.observation(state, viewer), viewer)


@pytest.mark.parametrize(("game", "variant"), VARIANTS)
def test_random_playouts_finish_with_a_valid_result(game, variant):
    for seed in range(12):
        *_, final = _playout(game, variant, seed)
        result = game.result(final)
        seats = game.seats(final)
        assert len(result["scores"]) == seats and len(result["ranks"]) == seats
        assert all(1 <= r <= seats for r in result["ranks"])
        assert 1 in result["ranks"]
        assert isinstance(result["details"], dict)
        _canon(result)
        assert game.current_seat(final) is None and game.legal_actions(final) == []


@pytest.mark.parametrize(("game", "variant"), VARIANTS)
def test_legal_actions_are_listed_until_the_end_and_all_apply(game, variant):
    for seed in range(3):
        well_formed = {"type": "none yet"}
        for state in _playout(game, variant, 100 + seed):
            if game.is_over(state):
                with pytest.raises(engines.IllegalAction, match="game is over"):
                    game.apply(state, well_formed)
                continue
            seat = game.current_seat(state)
            assert 0 <= seat < game.seats(state)
            actions = game.legal_actions(state)
            assert actions, "legal_actions is empty before the end"
            assert actions == game.legal_actions(state), "legal_actions order is not fixed"
            assert len({_canon(a) for a in actions}) == len(actions), "duplicate legal actions"
            for action in actions[:40]:
                assert isinstance(action.get("type"), str)
                game.apply(state, action)
            well_formed = actions[0]


@pytest.mark.parametrize(("game", "variant"), VARIANTS)
def test_made_up_and_mutated_actions_are_refused_with_a_reason(game, variant):
    open_types = set(getattr(game, "open_action_types", ()))
    mutations = [None, -1, 10**6, "x", [], {}, True, 2.5]
    bad_actions = [None, 3, "pass", [], {}, {"type": 7}, {"type": "no_such_action"}]
    for state in _playout(game, variant, 7):
        if game.is_over(state):
            break
        for bad in bad_actions:
            with pytest.raises(engines.EngineError) as caught:
                game.apply(state, bad)
            assert caught.value.reason
        legal = {_canon(a) for a in game.legal_actions(state)}
        for action in game.legal_actions(state)[:10]:
            if action["type"] in open_types:
                continue
            for key in [k for k in action if k != "type"]:
                for value in mutations:
                    mutated = dict(action, **{key: value})
                    if _canon(mutated) in legal:
                        continue
                    with pytest.raises(engines.EngineError) as caught:
                        game.apply(state, mutated)
                    assert caught.value.reason, f"no reason for {mutated}"


@pytest.mark.parametrize(("game", "variant"), VARIANTS)
def test_apply_never_mutates_its_input(game, variant):
    for state in _playout(game, variant, 11):
        if game.is_over(state):
            break
        before = _canon(state)
        for action in game.legal_actions(state)[:5]:
            game.apply(state, action)
            assert _canon(state) == before


@pytest.mark.parametrize(("game", "variant"), VARIANTS)
def test_no_apply_changes_any_earlier_state(game, variant):
    """States share the parts an action does not change (engines.base, `_copy_for_apply`):
    over random playouts, where from every state a few sibling actions and a grandchild of
    each are applied too, as well as the previous state's actions (stale now, refused mostly
    midway through `apply`), every state made keeps the JSON it had when it was made."""
    canon = functools.partial(orjson.dumps, option=orjson.OPT_SORT_KEYS)  # a faster _canon
    for seed in range(10):
        made: list[tuple[dict, bytes]] = []
        listed: list[dict] = []
        for state in _playout(game, variant, 700 + seed):
            made.append((state, canon(state)))
            if game.is_over(state):
                break
            actions = game.legal_actions(state)
            for action in actions[:3]:
                child = game.apply(state, action)
                made.append((child, canon(child)))
                if not game.is_over(child):
                    grandchild = game.apply(child, game.legal_actions(child)[-1])
                    made.append((grandchild, canon(grandchild)))
            for stale in listed[:10]:
                try:
                    sibling = game.apply(state, stale)
                except engines.IllegalAction:
                    continue
                made.append((sibling, canon(sibling)))
            listed = actions
        changed = [i for i, (state, json) in enumerate(made) if canon(state) != json]
        assert not changed, f"seed {700 + seed}: states {changed[:5]} changed after they were made"


@pytest.mark.parametrize(("game", "variant"), VARIANTS)
def test_same_seed_and_choices_give_the_same_game(game, variant):
    for seed in (3, 12345):
        first = [_canon(game.to_json(s)) for s in _playout(game, variant, seed)]
        second = [_canon(game.to_json(s)) for s in _playout(game, variant, seed)]
        assert first == second
    a = _canon(game.to_json(_new(game, variant, 1)))
    b = _canon(game.to_json(_new(game, variant, 2)))
    assert a != b, "different seeds gave the same setup"


@pytest.mark.parametrize(("game", "variant"), VARIANTS)
def test_json_round_trip_is_lossless(game, variant):
    states = list(_playout(game, variant, 21))
    for state in states:
        data = json.loads(_canon(game.to_json(state)))
        restored = game.from_json(data)
        assert _canon(game.to_json(restored)) == _canon(game.to_json(state))
        if not game.is_over(state):
            assert game.legal_actions(restored) == game.legal_actions(state)
            action = game.legal_actions(state)[0]
            assert _canon(game.apply(restored, action)) == _canon(game.apply(state, action))


@pytest.mark.parametrize(("game", "variant"), VARIANTS)
def test_observations_are_json_and_reveal_no_other_seats_secrets(game, variant):
    """Each seat's view, and the spectator's (seat None), is the same over every state that
    differs only in what that viewer may not see."""
    rng = Rng(99)
    hidden_differs = 0
    for seed in range(3):
        for state in _playout(game, variant, 300 + seed):
            snapshot = clone(state)
            spectator = _canon(game.observation(state, None))
            assert json.loads(spectator)["legal_actions"] == []
            for seat in range(game.seats(state)):
                seen = _canon(game.observation(state, seat))
                variant_state = game.hidden_variant(state, seat, rng)
                assert _canon(state) == _canon(snapshot), "hidden_variant mutated its input"
                hidden_differs += _canon(variant_state) != _canon(state)
                assert _canon(game.observation(variant_state, seat)) == seen, (
                    f"seat {seat}'s observation depends on something it may not see"
                )
                assert _canon(game.observation(variant_state, None)) == spectator, (
                    f"the spectator's view depends on a secret of a seat other than {seat}"
                )
                observation = json.loads(seen)
                assert observation["seat"] == seat
                if game.current_seat(state) == seat:
                    assert observation["legal_actions"] == game.legal_actions(state)
                else:
                    assert observation["legal_actions"] == []
    assert hidden_differs, "hidden_variant never changed anything: the test would prove nothing"
