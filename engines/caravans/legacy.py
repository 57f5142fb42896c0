"""Caravans 2: the same rules; a finished game had `end_reason` (a string) and no end
record, logged as `game_over {"reason"}`, and its result's `details.end` was the reason."""

from __future__ import annotations

from engines.legacy import Vocabulary, with_log
from engines.schema import event, string
from engines.types import End, Event, JsonObject, Result, State

from .flow import END_REASONS, END_TEXT


def old_event(entry: Event) -> Event:
    if entry["event"] == "end":
        return {"event": "game_over", "reason": entry["reason"]}
    return entry


class V2(Vocabulary):
    version = "2"

    def old_state(self, state: State) -> State:
        old = {key: value for key, value in state.items() if key != "end"}
        old["end_reason"] = state["end"]["reason"] if state["end"] else None
        return with_log(old, old_event)

    def new_state(self, state: State) -> State:
        reason = state["end_reason"]
        end: End | None = None if reason is None else {
            "reason": reason, "seat": None, "text": END_TEXT[reason]}

        def new_event(entry: Event) -> Event:
            return {"event": "end", **(end or {})} if entry["event"] == "game_over" else entry

        new = {key: value for key, value in state.items() if key != "end_reason"}
        return with_log({**new, "end": end}, new_event)

    def old_observation(self, observation: JsonObject) -> JsonObject:
        return with_log({k: v for k, v in observation.items() if k != "end"}, old_event)

    def old_result(self, result: Result) -> Result:
        end = result["details"]["end"]
        return {**result, "details": {**result["details"], "end": end["reason"]}}

    def old_observation_schema(self, schema: JsonObject) -> JsonObject:
        del schema["properties"]["end"]
        schema["required"].remove("end")
        events = schema["$defs"]["event"]["oneOf"]
        game_over = event("game_over", {"reason": string(END_REASONS)})
        schema["$defs"]["event"]["oneOf"] = [game_over if e["title"] == "end" else e
                                             for e in events]
        return schema
