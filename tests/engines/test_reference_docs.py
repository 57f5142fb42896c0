"""The observation and action reference of docs/bots.md is the generator's output, and the
generator leaves out nothing the schemas publish (issue 15, item 8)."""

from pathlib import Path

import pytest

import engines
from engines.reference import COMMON, embed, embedded, render_all, render_game

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "bots.md"


def test_docs_bots_md_holds_the_reference_generated_from_the_schemas():
    document = GUIDE.read_text()
    assert embedded(document) == render_all(), (
        "docs/bots.md drifted from the schemas: python3 -m engines.reference --write docs/bots.md"
    )
    assert embed(document, render_all()) == document


@pytest.mark.parametrize("name", engines.names())
def test_every_field_action_and_event_of_the_schemas_has_a_row(name):
    game = engines.get(name)
    text = render_game(game)
    description = game.describe()
    observation = description["observation_schema"]
    for field in observation["properties"]:
        if field not in COMMON:
            assert f"| `{field}`" in text, f"observation field {field} has no row"
    for branch in description["action_schema"]["oneOf"]:
        assert f"| `{branch['title']}` |" in text
        for field in branch["properties"]:
            assert field == "type" or f"`{field}`" in text
    for event in observation["$defs"]["event"]["oneOf"]:
        assert f": {event['title']}` |" in text


def test_the_caravans_reference_says_which_offers_legal_actions_lists():
    """The old reference said offers were "not enumerated in legal_actions"; the engine lists
    one offer per other player with gold (your lowest card for 1 gold) while you may offer."""
    text = render_game(engines.get("caravans"))
    assert "not enumerated" not in text
    assert "legal_actions lists one simple offer per other player holding gold (your " \
           "lowest-id card for 1 gold)" in text
    game = engines.get("caravans")
    state = game.new_game(3, 5)
    while state["phase"] != "actions":
        state = game.apply(state, game.legal_actions(state)[-1])
    seat = game.current_seat(state)
    offers = [a for a in game.legal_actions(state) if a["type"] == "offer_trade"]
    hand = state["hands"][seat]
    assert offers == [
        {"type": "offer_trade", "to": other, "give": {"cards": [min(hand)]}, "take": {"gold": 1}}
        for other in range(3) if other != seat and state["gold"][other] >= 1
    ] and offers
