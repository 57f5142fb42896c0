"""Each game's fixed action index space (engines.action_space, issue 30): every action a
random game lists has an index and comes back from it, the space is the action schema's
(with the proved bounds on amounts), and it does not move."""

from __future__ import annotations

import hashlib
import random

import orjson
import pytest

import engines
from engines import action_space
from engines.action_space import ActionSpace, OutsideActionSpace, schema_actions
from tests.support.python_process import printed_by

GAMES = 20
SETUPS = [pytest.param(name, variant, id=f"{name}-{variant['num_players']}p-"
                       f"{variant['options'].get('mode', '')}".rstrip("-"))
          for name in engines.names() for variant in engines.get(name).variants()]
PINNED = {
    "aladino": (87, "ebbb792fe8313d03"),
    "aldabas": (1592, "2f73ea9f853a0984"),
    "caravans": (40446, "5d34fefd0c6ab212"),
}
"""Size and digest of each space: indices are a contract (bots and trained models keep
them), so changing one is a decision, made here."""


def _digest(space: ActionSpace) -> str:
    return hashlib.sha256(orjson.dumps([space.action(i) for i in range(len(space))])
                          ).hexdigest()[:16]


@pytest.mark.parametrize(("name", "variant"), SETUPS)
def test_every_listed_action_has_an_index_and_comes_back(name, variant):
    game, space = engines.get(name), action_space.of(name)
    bound = action_space.max_decisions(name, variant["num_players"], variant["options"])
    for seed in range(GAMES):
        state = game.new_game(variant["num_players"], seed, variant["options"])
        chooser, decisions = random.Random(seed), 0
        while not game.is_over(state):
            legal = game.legal_actions(state)
            indices = space.indices(legal)
            assert len(set(indices)) == len(legal)
            assert [space.action(i) for i in indices] == legal
            state = game.apply(state, chooser.choice(legal))
            decisions += 1
        assert decisions <= bound


@pytest.mark.parametrize("name", engines.names())
def test_the_space_is_the_action_schema_in_canonical_form(name):
    game, space = engines.get(name), action_space.of(name)
    for index in range(len(space)):
        action = space.action(index)
        assert game.canonical_action(action) == action  # the schema accepts it as it is
        assert space.index(action) == index
        assert space.index(dict(reversed(action.items()))) == index  # key order is moot


@pytest.mark.parametrize("name", engines.names())
def test_the_space_does_not_move(name):
    space = action_space.of(name)
    assert (len(space), _digest(space)) == PINNED[name]
    assert action_space.of(engines.get(name)) is space


def test_the_amounts_reach_the_proved_bounds():
    from engines.aldabas.action_space import MAX_COINS
    from engines.caravans.action_space import MAX_GOLD, max_gold

    aldabas, caravans = action_space.of("aldabas"), action_space.of("caravans")
    assert aldabas.index({"type": "withdraw", "coins": MAX_COINS}) == (
        aldabas.index({"type": "withdraw", "coins": 1}) + MAX_COINS - 1)
    with pytest.raises(OutsideActionSpace):
        aldabas.index({"type": "withdraw", "coins": MAX_COINS + 1})
    assert MAX_GOLD == max_gold(4) > max_gold(3) > max_gold(2)
    caravans.index({"type": "bid", "amount": MAX_GOLD})
    caravans.index({"type": "open_auction", "item": "shah", "amount": 0})
    with pytest.raises(OutsideActionSpace):
        caravans.index({"type": "bid", "amount": MAX_GOLD + 1})


def test_an_offer_of_ones_own_making_has_no_index_but_is_valid():
    """Open actions: the space holds the trade offers legal_actions lists, no others."""
    offer = {"type": "offer_trade", "to": 1, "give": {"gold": 2}, "take": {"card_types": ["silk"]}}
    assert engines.get("caravans").canonical_action(offer) == offer
    with pytest.raises(OutsideActionSpace) as refused:
        action_space.of("caravans").index(offer)
    assert isinstance(refused.value, engines.EngineError)


def test_an_index_outside_the_space_is_refused():
    space = action_space.of("aladino")
    for index in (-1, len(space)):
        with pytest.raises(IndexError):
            space.action(index)


def test_the_actions_are_new_dicts():
    space = action_space.of("aldabas")
    space.action(0)["type"] = "changed"
    assert space.action(0)["type"] == "setup_vault"


def test_a_field_with_too_many_values_must_be_given():
    schema = {"oneOf": [{"properties": {"type": {"const": "pay"},
                                        "gold": {"type": "integer", "minimum": 0,
                                                 "maximum": 2**53 - 1}},
                         "required": ["type", "gold"]}]}
    with pytest.raises(ValueError, match="too many values"):
        list(schema_actions(schema))
    given = schema_actions(schema, values={"pay": {"gold": range(2)}})
    assert list(given) == [{"type": "pay", "gold": 0}, {"type": "pay", "gold": 1}]


def test_an_action_listed_twice_is_refused():
    with pytest.raises(ValueError, match="twice"):
        ActionSpace([{"type": "pass"}, {"type": "pass"}])


def test_only_the_adapters_need_openspiel_and_pettingzoo():
    """engines.action_space, tensor and rewards import neither (nor does anything else)."""
    code = ("import sys, engines, engines.action_space, engines.tensor, engines.rewards\n"
            "for name in engines.names():\n"
            "    engines.action_space.of(name), engines.tensor.of(name)\n"
            "adapters = {'pyspiel', 'pettingzoo', 'gymnasium', 'open_spiel'}\n"
            "print(sorted(adapters & set(sys.modules)))")
    assert printed_by(code) == "[]"
