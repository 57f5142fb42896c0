"""Each game's observation and action reference as Markdown, rendered from `describe()`.

`docs/bots.md` embeds this text between `<!-- reference:begin -->` and
`<!-- reference:end -->`; a test checks that it names every action. Refresh it with

    python3 -m bots.python.reference --write docs/bots.md
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

import engines

BEGIN, END = "<!-- reference:begin -->", "<!-- reference:end -->"
COMMON_KEYS = ("game", "seat", "to_move", "legal_actions", "log")
EXAMPLE_SEED, EXAMPLE_STEPS = 1, 30


def render_all() -> str:
    return "\n".join(render_game(engines.get(name)) for name in engines.names())


def render_game(game: engines.Game) -> str:
    description = game.describe()
    title = description.get("title", game.name)
    lines = [f"### {game.name}: {title}", "",
             f"Players {game.min_players}–{game.max_players}, engine version {game.version}. "
             f"Full data: `GET /games/{game.name}`.", ""]
    if description.get("options"):
        lines += ["**Options**", "", *bullets(description["options"]), ""]
    lines += ["**Observation** (besides `game`, `seat`, `to_move`, `legal_actions`, `log`)",
              "", *observation_bullets(game, description.get("observation") or {}), ""]
    lines += ["**Actions**", ""]
    for kind, spec in description["actions"].items():
        if isinstance(spec, dict):
            lines += [f"- `{kind}`", *bullets(spec, depth=1)]
        else:
            lines.append(f"- `{kind}`: {spec}")
    if description.get("open_action_types"):
        lines += ["", "Open actions (not enumerated in `legal_actions`; `apply` validates "
                  f"them): {', '.join(f'`{k}`' for k in description['open_action_types'])}."]
    for key, schema in description.items():
        if key.endswith("_schema"):
            lines += ["", f"`{key}` (JSON Schema):", "", "```json",
                      json.dumps(schema, indent=1), "```"]
    return "\n".join(lines) + "\n"


def observation_bullets(game: engines.Game, documented: dict) -> list[str]:
    """Each observation key: the engine's own words where describe() has them, else a value
    seen in a seeded game."""
    example = example_observation(game)
    lines = []
    for key, value in example.items():
        if key in COMMON_KEYS:
            continue
        text = documented.get(key) or f"e.g. `{shorten(json.dumps(value))}`"
        lines.append(f"- {key}: {text}")
    return lines


def example_observation(game: engines.Game) -> dict:
    """The observation of the seat to move after EXAMPLE_STEPS random decisions of a
    seeded game with the fewest players of the game's first setup."""
    variant = game.variants()[0]
    state = game.new_game(variant["num_players"], EXAMPLE_SEED, variant["options"])
    chooser = random.Random(EXAMPLE_SEED)
    for _ in range(EXAMPLE_STEPS):
        if game.is_over(state):
            break
        state = game.apply(state, chooser.choice(game.legal_actions(state)))
    return game.observation(state, game.current_seat(state) or 0)


def shorten(text: str, limit: int = 110) -> str:
    return text if len(text) <= limit else text[:limit] + " …"


def bullets(value: dict, depth: int = 0) -> list[str]:
    """Nested Markdown bullets; leaves that are not strings are shown as inline JSON."""
    pad, lines = "  " * depth, []
    for key, item in value.items():
        if isinstance(item, dict) and item and key != "example":
            lines.append(f"{pad}- {key}:")
            lines += bullets(item, depth + 1)
        else:
            text = item if isinstance(item, str) else f"`{json.dumps(item)}`"
            lines.append(f"{pad}- {key}: {text}")
    return lines


def embed(document: str, reference: str) -> str:
    """`document` with the text between the markers replaced by `reference`."""
    head, found, rest = document.partition(BEGIN)
    _, found_end, tail = rest.partition(END)
    if not (found and found_end):
        raise ValueError(f"the document lacks the {BEGIN} ... {END} markers")
    return f"{head}{BEGIN}\n{reference}{END}{tail}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="print or embed the games' bot reference")
    parser.add_argument("--write", type=Path, help="embed into this Markdown file")
    args = parser.parse_args(argv)
    if args.write:
        args.write.write_text(embed(args.write.read_text(), render_all()))
    else:
        print(render_all())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
