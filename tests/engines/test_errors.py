"""The engines' error codes are a contract the referee reads: each class keeps its code."""

import pytest

import engines
from engines.errors import CODES

PUBLISHED = {
    "engine/error": "EngineError",
    "action/invalid": "InvalidAction",
    "action/illegal": "IllegalAction",
    "game/unknown": "UnknownGame",
    "game/unknown_version": "UnknownVersion",
    "game/invalid_setup": "InvalidSetup",
    "game/invalid_state": "InvalidState",
}


def test_every_error_class_keeps_its_published_code():
    assert {code: error.__name__ for code, error in CODES.items()} == PUBLISHED
    for code, error in CODES.items():
        assert error.code == code and issubclass(error, engines.EngineError)
        assert getattr(engines, error.__name__) is error


@pytest.mark.parametrize(("call", "error"), [
    (lambda: engines.get("chess"), engines.UnknownGame),
    (lambda: engines.get("aladino", "0"), engines.UnknownVersion),
    (lambda: engines.get("aladino").new_game(9, 1), engines.InvalidSetup),
    (lambda: engines.get("aladino").from_json({"game": "chess"}), engines.InvalidState),
    (lambda: engines.get("aladino").apply(engines.get("aladino").new_game(2, 1), {}),
     engines.InvalidAction),
])
def test_each_kind_of_mistake_raises_its_error_with_a_reason(call, error):
    with pytest.raises(error) as caught:
        call()
    assert type(caught.value) is error and caught.value.reason
