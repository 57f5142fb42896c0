"""Each game's observation and action reference as Markdown tables, rendered from the JSON
Schemas its `describe()` publishes.

`docs/bots.md` embeds the output between `<!-- reference:begin -->` and
`<!-- reference:end -->`; a test fails when the two differ. Refresh it with

    python3 -m engines.reference --write docs/bots.md
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import engines
from engines.schema import MAX_AMOUNT, Schema

BEGIN, END = "<!-- reference:begin -->", "<!-- reference:end -->"
COMMON = ("game", "seat", "to_move", "legal_actions", "log", "end")
REFS = {"#/$defs/action": "an action (see Actions)", "#/$defs/event": "an event (see Log events)"}
SHORT_ENUM = 12
LOG_NOTE = ("Every log entry is an object whose `event` field names its kind (the tables "
            "below list each game's events and their fields). A finished game's `end` is its "
            "end record, the same in every game, and its last log entry is the `end` event "
            "with the same fields; `result.details.end` repeats it.")


def render_all() -> str:
    games = [engines.get(name) for name in engines.names()]
    return "\n".join([common_part(games[0]), *map(render_game, games)])


def common_part(game: engines.Game) -> str:
    """The fields every observation has, whatever the game."""
    observation = game.describe()["observation_schema"]
    common = {key: observation["properties"][key] for key in COMMON}
    common["game"] = {"type": "string", "description": "the game's name"}
    common["end"]["anyOf"][0]["properties"]["reason"] = {
        "type": "string", "description": "why the game ended: one of the game's end reasons "
        "(its `end` event below)"}
    return "\n".join(["Every observation has these fields:", "",
                      *field_table(common, list(COMMON)), "", LOG_NOTE, ""]) + "\n"


def render_game(game: engines.Game) -> str:
    description = game.describe()
    lines = [
        f"### {game.name}: {description.get('title', game.name)}", "",
        f"Players {game.min_players}–{game.max_players}, engine version {game.version}. "
        f"Full data and both schemas: `GET /games/{game.name}` (`description.action_schema`, "
        "`description.observation_schema`).", "",
    ]
    if description.get("options"):
        lines += ["**Options**", "", *options_table(description["options"]), ""]
    observation = description["observation_schema"]
    lines += ["**Observation** (besides the fields every game has)", "",
              *field_table({k: v for k, v in observation["properties"].items()
                            if k not in COMMON}, observation["required"]), ""]
    lines += ["**Actions**", "", *actions_table(description["action_schema"]), ""]
    for note in open_action_notes(description):
        lines += [note, ""]
    lines += ["**Log events**", "", *events_table(observation["$defs"]["event"]["oneOf"])]
    return "\n".join(lines) + "\n"


# ----- tables -----------------------------------------------------------------------------
def options_table(options: Schema) -> list[str]:
    rows = [f"| `{name}` | {type_text(spec)} | `{json.dumps(spec.get('default'))}` | "
            f"{cell(spec.get('doc', ''))} |" for name, spec in options.items()]
    return ["| option | type | default | meaning |", "| --- | --- | --- | --- |", *rows]


def field_table(properties: Schema, required: list[str]) -> list[str]:
    rows = []
    for name, schema in properties.items():
        rows += field_rows(f"`{name}`" if name in required else f"`{name}` (optional)",
                           name, schema)
    return ["| field | type | meaning |", "| --- | --- | --- |", *rows]


def field_rows(label: str, path: str, schema: Schema) -> list[str]:
    """A row for the field, then rows for the fields of an object it holds."""
    rows = [f"| {label} | {type_text(schema)} | {cell(schema.get('description', ''))} |"]
    inner, suffix = expandable(schema)
    if inner is not None:
        required = inner.get("required", [])
        for key, sub in inner["properties"].items():
            sub_path = f"{path}{suffix}.{key}"
            sub_label = f"`{sub_path}`" if key in required else f"`{sub_path}` (optional)"
            rows += field_rows(sub_label, sub_path, sub)
    return rows


def expandable(schema: Schema) -> tuple[Schema | None, str]:
    """The object whose fields get rows of their own (through arrays and null), with the
    path suffix that reaches it ("[]" per array)."""
    suffix = ""
    while True:
        alternatives = [s for s in schema.get("anyOf", []) if s.get("type") != "null"]
        if len(alternatives) == 1:
            schema = alternatives[0]
        elif schema.get("type") == "array" and isinstance(schema.get("items"), dict):
            schema, suffix = schema["items"], suffix + "[]"
        else:
            break
    if schema.get("type") == "object" and "properties" in schema:
        return schema, suffix
    return None, ""


def actions_table(schema: Schema) -> list[str]:
    rows, details = [], []
    for branch in schema["oneOf"]:
        fields = {k: v for k, v in branch["properties"].items() if k != "type"}
        listed = fields_cell(fields, branch["required"])
        rows.append(f"| `{branch['title']}` | {listed} | {cell(branch['description'])} |")
        if any(expandable(v)[0] is not None for v in fields.values()):
            details += ["", f"Fields of `{branch['title']}`:", "",
                        *field_table(fields, branch["required"])]
    return ["| action | fields | meaning |", "| --- | --- | --- |", *rows, *details]


def events_table(events: list[Schema]) -> list[str]:
    rows = []
    for event in events:
        key = next(iter(event["properties"]))
        fields = {k: v for k, v in event["properties"].items() if k != key}
        listed = fields_cell(fields, event["required"])
        rows.append(f"| `{key}: {event['title']}` | {listed} | "
                    f"{cell(event.get('description', ''))} |")
    return ["| event | fields | note |", "| --- | --- | --- |", *rows]


def fields_cell(fields: Schema, required: list[str]) -> str:
    """Fields on one line each: name, type and what it means."""
    return "<br>".join(
        f"`{k}`{'' if k in required else ' (optional)'}: {inline(v)}"
        + (f": {cell(v['description'])}" if "description" in v and not is_object(v) else "")
        for k, v in fields.items()) or "—"


def is_object(schema: Schema) -> bool:
    return schema.get("type") == "object" and "properties" in schema


def open_action_notes(description: Schema) -> list[str]:
    kinds = description.get("open_action_types") or []
    if not kinds:
        return []
    named = ", ".join(f"`{kind}`" for kind in kinds)
    return [f"Open action types: {named}. `legal_actions` lists only some of them (see the "
            "meaning above); any other action of these types that fits the action schema may "
            "be sent, and `apply` judges it by the rules."]


# ----- types as text ------------------------------------------------------------------------
def type_text(schema: Schema) -> str:
    """A compact type: `integer 0–5`, `"a" \\| "b"`, `array (61) of object`, `[integer,
    integer]`, `object: route → integer \\| null`."""
    if "$ref" in schema:
        ref: str = schema["$ref"]
        return REFS.get(ref, ref)
    if "const" in schema:
        return f"`{json.dumps(schema['const'])}`"
    if "enum" in schema:
        return enum_text(schema["enum"])
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return alternatives_text(schema[key])
    kind = schema.get("type")
    if kind == "integer":
        return integer_text(schema)
    if kind == "array":
        return array_text(schema)
    if kind == "object" and "propertyNames" in schema:
        return (f"object: {type_text(schema['propertyNames'])} → "
                f"{type_text(schema['additionalProperties'])}")
    return str(kind)


def alternatives_text(alternatives: list[Schema]) -> str:
    """anyOf/oneOf: several objects are spelled out (no rows of their own), a single one is
    just "object" (its fields get rows)."""
    spelled = sum(is_object(s) for s in alternatives) > 1
    return " \\| ".join(inline(s) if spelled else "object" if is_object(s) else type_text(s)
                         for s in alternatives)


def inline(schema: Schema) -> str:
    """A type on one line, objects with their fields."""
    if is_object(schema):
        fields = ", ".join(f"{k}: {inline(v)}" for k, v in schema["properties"].items())
        return "{" + fields + "}"
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return " \\| ".join(inline(s) for s in schema[key])
    if schema.get("type") == "array" and "items" in schema and "prefixItems" not in schema:
        return f"{count_text(schema)}{inline(schema['items'])}"
    return type_text(schema)


def enum_text(values: list[Any]) -> str:
    if len(values) > SHORT_ENUM:
        kind = "strings" if all(isinstance(v, str) for v in values) else "values"
        return f"one of {len(values)} {kind}"
    return " \\| ".join(f"`{json.dumps(v)}`" for v in values)


def integer_text(schema: Schema) -> str:
    low, high = schema.get("minimum"), schema.get("maximum")
    if low is not None and high is not None and high < MAX_AMOUNT:
        return f"integer {low}–{high}" if low >= 0 else f"integer {low} to {high}"
    if low is not None:
        return f"integer ≥ {low}"
    return "integer"


def array_text(schema: Schema) -> str:
    if "prefixItems" in schema:
        return "[" + ", ".join(type_text(s) for s in schema["prefixItems"]) + "]"
    items = schema["items"]
    of = "object" if items.get("type") == "object" and "anyOf" not in items else type_text(items)
    return f"{count_text(schema)}{of}"


def count_text(schema: Schema) -> str:
    low, high = schema.get("minItems", 0), schema.get("maxItems")
    size = (f"{low}" if low == high else f"{low}–{high}" if high is not None
            else f"≥ {low}" if low else "")
    notes = ", ".join(note for note in (size, "unique" * bool(schema.get("uniqueItems"))) if note)
    return f"array ({notes}) of " if notes else "array of "


def cell(text: str) -> str:
    """Prose for a table cell: no line breaks, no pipes, no HTML."""
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace("|", "\\|").replace("\n", " "))


# ----- embedding -------------------------------------------------------------------------------
def embed(document: str, reference: str) -> str:
    """`document` with the text between the markers replaced by `reference`."""
    head, found, rest = document.partition(BEGIN)
    _, found_end, tail = rest.partition(END)
    if not (found and found_end):
        raise ValueError(f"the document lacks the {BEGIN} ... {END} markers")
    return f"{head}{BEGIN}\n{reference}{END}{tail}"


def embedded(document: str) -> str:
    """The reference text a document holds between the markers."""
    return document.split(BEGIN, 1)[1].split(END, 1)[0].removeprefix("\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="print or embed the games' bot reference")
    parser.add_argument("--write", type=Path, help="embed into this Markdown file")
    args = parser.parse_args(argv)
    if args.write:
        args.write.write_text(embed(args.write.read_text(), render_all()))
    else:
        print(render_all(), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
