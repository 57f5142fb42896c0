"""Aldabas 1.1.0: the same rules; the end trigger was `ending: {"by", "reason"}` ("by":
"rival" for the Rival), logged as `end_triggered {"by", "reason"}`, and the game ended
with a bare `game_over` event and no end record."""

from __future__ import annotations

from typing import Any

from engines.base import OVER
from engines.legacy import Vocabulary, with_log
from engines.schema import event, nullable, obj, string
from engines.types import End, Event, JsonObject, Result, State

from .schemas import BY
from .table import END_REASONS, RIVAL, trigger_text

OLD_ENDING = nullable(obj({"by": BY, "reason": string(END_REASONS)}),
                      description="the end trigger, once set off")


def old_ending(trigger: End | None) -> dict[str, Any] | None:
    if trigger is None:
        return None
    return {"by": RIVAL if trigger["seat"] is None else trigger["seat"],
            "reason": trigger["reason"]}


def new_trigger(ending: dict[str, Any] | None) -> End | None:
    if ending is None:
        return None
    seat = None if ending["by"] == RIVAL else ending["by"]
    return {"reason": ending["reason"], "seat": seat,
            "text": trigger_text(ending["reason"], seat)}


def old_event(entry: Event) -> Event:
    if entry["event"] == "end_triggered":
        return {"event": "end_triggered", **(old_ending(entry_end(entry)) or {})}
    if entry["event"] == "end":
        return {"event": "game_over"}
    return entry


def entry_end(entry: Event) -> End:
    return {"reason": entry["reason"], "seat": entry["seat"], "text": entry["text"]}


def with_ending(view: JsonObject) -> JsonObject:
    """`end_trigger` back as `ending`, in its place; no `end`."""
    return {("ending" if key == "end_trigger" else key):
            (old_ending(value) if key == "end_trigger" else value)
            for key, value in view.items() if key != "end"}


class V1(Vocabulary):
    version = "1.1.0"

    def old_state(self, state: State) -> State:
        return with_log(with_ending(state), old_event)

    def new_state(self, state: State) -> State:
        trigger = new_trigger(state["ending"])
        end = trigger if state["phase"] == OVER else None

        def new_event(entry: Event) -> Event:
            if entry["event"] == "end_triggered":
                return {"event": "end_triggered", **(trigger or {})}
            if entry["event"] == "game_over":
                return {"event": "end", **(end or {})}
            return entry

        new = {("end_trigger" if key == "ending" else key):
               (trigger if key == "ending" else value) for key, value in state.items()}
        return with_log({**new, "end": end}, new_event)

    def old_observation(self, observation: JsonObject) -> JsonObject:
        return with_log(with_ending(observation), old_event)

    def old_result(self, result: Result) -> Result:
        details = {key: value for key, value in result["details"].items() if key != "end"}
        details["ending"] = old_ending(result["details"]["end"])
        return {**result, "details": details}

    def old_observation_schema(self, schema: JsonObject) -> JsonObject:
        schema["properties"] = {("ending" if key == "end_trigger" else key):
                                (OLD_ENDING if key == "end_trigger" else value)
                                for key, value in schema["properties"].items() if key != "end"}
        schema["required"] = [("ending" if key == "end_trigger" else key)
                              for key in schema["required"] if key != "end"]
        events = schema["$defs"]["event"]["oneOf"]
        changed = {"end_triggered": event("end_triggered", {"by": BY,
                                                             "reason": string(END_REASONS)}),
                   "end": event("game_over")}
        schema["$defs"]["event"]["oneOf"] = [changed.get(e["title"], e) for e in events]
        return schema
