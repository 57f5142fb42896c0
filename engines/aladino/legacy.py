"""Aladino 1.0.0: the same rules; its log entries named their kind "type" (now "event")."""

from __future__ import annotations

from engines.legacy import Vocabulary, renamed, with_log
from engines.types import JsonObject, Result, State


class V1(Vocabulary):
    version = "1.0.0"

    def old_state(self, state: State) -> State:
        return with_log(state, lambda entry: renamed(entry, "event", "type"))

    def new_state(self, state: State) -> State:
        return with_log(state, lambda entry: renamed(entry, "type", "event"))

    def old_observation(self, observation: JsonObject) -> JsonObject:
        return with_log(observation, lambda entry: renamed(entry, "event", "type"))

    def old_result(self, result: Result) -> Result:
        return result

    def old_observation_schema(self, schema: JsonObject) -> JsonObject:
        for branch in schema["$defs"]["event"]["oneOf"]:
            branch["properties"] = renamed(branch["properties"], "event", "type")
            branch["required"] = ["type" if key == "event" else key for key in branch["required"]]
        return schema
