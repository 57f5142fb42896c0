"""The one error hierarchy of the rules engines."""


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
    """The action is well formed but breaks a rule in the current state."""

    code = "action/illegal"


class UnknownGame(EngineError):
    """No engine is registered under that name."""

    code = "game/unknown"


class InvalidSetup(EngineError):
    """`new_game` was asked for an unsupported player count or option."""

    code = "game/invalid_setup"
