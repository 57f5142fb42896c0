"""The setups each game accepts, as JSON Schema, for the bodies that start a match or a
tournament, so that a body the spec admits is one the server accepts.

A setup is one of the engine's variants grouped by options; which described option it
admits, and which it needs, is asked of the engine (`normalize_options`). The rules are one
`if` (the body's `game` is G) `then` (one of G's setups) per game beside the body's own
properties: validators apply them, while code generators, which skip `if`, make one model
of the body with its every field.
"""

from __future__ import annotations

from collections.abc import Callable

import engines

OPTION_KEYWORDS = ("type", "enum", "minimum", "maximum", "default")
Setup = tuple[list[int], dict]  # (player counts, JSON Schema of its options)


def every_option() -> dict:
    """The options any game describes (each setup narrows them further)."""
    properties = {}
    for game in engines.names():
        for name, described in engines.get(game).describe().get("options", {}).items():
            properties[name] = _option_rule(described)
    return {"properties": properties, "additionalProperties": False}


def per_game(rules: Callable[[list[int], dict], list[dict]]) -> list[dict]:
    """One conditional per game: when the body's `game` is it, one of the `rules` its setups
    make (`rules(player counts, options schema)`: the rules of one setup) holds."""
    conditionals = []
    for game, setups in game_setups().items():
        alternatives = [rule for counts, options in setups for rule in rules(counts, options)]
        conditionals.append({"if": {"properties": {"game": {"const": game}}},
                             "then": alternatives[0] if len(alternatives) == 1
                             else {"anyOf": alternatives}})
    return conditionals


def setup_rule(properties: dict, options: dict, required: tuple = ()) -> dict:
    """The rule of one setup: `properties` narrowed, its `options`, the fields it needs."""
    rule: dict = {"properties": {**properties, "options": options}}
    needs = [*required, *(("options",) if options.get("required") else ())]
    if needs:
        rule["required"] = needs
    return rule


def game_setups() -> dict[str, list[Setup]]:
    """Every game's setups: the engine's variants grouped by options."""
    setups = {}
    for game in engines.names():
        engine = engines.get(game)
        groups: dict[str, tuple[list[int], dict]] = {}
        for variant in engine.variants():
            key = repr(sorted(variant["options"].items()))
            groups.setdefault(key, ([], variant["options"]))[0].append(variant["num_players"])
        setups[game] = [(sorted(counts), _options_schema(engine, counts[0], chosen))
                        for counts, chosen in groups.values()]
    return setups


def _option_rule(described: dict) -> dict:
    rule = {key: described[key] for key in OPTION_KEYWORDS if key in described}
    return {**rule, "description": described.get("doc", "")}


def _options_schema(engine: engines.Game, players: int, chosen: dict) -> dict:
    """The options of the setup that `chosen` selects: its own options as constants
    (required unless leaving one out selects the same setup), plus every described option
    the engine accepts with it."""
    properties, required = {}, []
    for name, described in engine.describe().get("options", {}).items():
        if name in chosen:
            properties[name] = {"const": chosen[name]}
            rest = {key: value for key, value in chosen.items() if key != name}
            if _normalized(engine, players, rest) != _normalized(engine, players, chosen):
                required.append(name)
        elif _normalized(engine, players, {**chosen, name: described.get("default")}):
            properties[name] = _option_rule(described)
    schema = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = required
    return schema


def _normalized(engine: engines.Game, players: int, options: dict) -> dict | None:
    try:
        return engine.normalize_options(players, dict(options))
    except engines.InvalidSetup:
        return None
