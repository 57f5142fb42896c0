"""The one error hierarchy of the rules engines, each kind with a stable `code`.

The codes are a public contract: the referee maps each to its problem type (`CODES` lists
them all), so a code never changes once published; a new kind of error gets a new class
and a new code.
"""

from __future__ import annotations


class EngineError(Exception):
    """Base of every engine error; `reason` is a sentence a bot author can read."""

    code = "engine/error"

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class InvalidAction(EngineError):
    """The action is malformed: not an object, unknown type, missing or ill-typed fields."""

    code = "action/invalid"


class IllegalAction(EngineError):
    """The action is well formed but breaks a rule in the current state (or the game is
    over, or `result` is asked before the end)."""

    code = "action/illegal"


class UnknownGame(EngineError):
    """No engine is registered under that name."""

    code = "game/unknown"


class UnknownVersion(UnknownGame):
    """The game is known, but not that version of its rules (`engines.versions(name)`)."""

    code = "game/unknown_version"


class InvalidSetup(EngineError):
    """`new_game` was asked for an unsupported player count, seed or option."""

    code = "game/invalid_setup"


class InvalidState(InvalidSetup):
    """`from_json` was given data that is not a saved state of this game and version."""

    code = "game/invalid_state"


CODES: dict[str, type[EngineError]] = {
    error.code: error
    for error in (EngineError, InvalidAction, IllegalAction, UnknownGame, UnknownVersion,
                  InvalidSetup, InvalidState)
}
"""Every engine error class by its code."""
