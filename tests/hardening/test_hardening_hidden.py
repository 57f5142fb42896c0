"""Hidden information through the API. The property test over random games of every game
and mode, nested event logs included, is tests/engines/test_hidden_information.py: no
observation of a seat changes when everything that seat may not see is re-dealt.

Here the spectator's view of `GET /matches/{id}/replay/{step}` (no `seat`) is checked on
matches of every multi-seat variant played by a worker: it offers no legal actions, and
its event log, private details included, shows nothing that some seat does not see itself
(every value of it is, at the same place, in each seat's log of that step). As no seat's
view depends on another seat's secrets, neither does the spectator's log.
"""

from __future__ import annotations

import pytest

import engines

CONFIGS = [(name, variant) for name in engines.names()
           for variant in engines.get(name).variants() if variant["num_players"] > 1]


def contained(part, whole, path: str = "") -> None:
    """Every value of `part` is in `whole` at the same place (lists item by item); a null
    in `part` shows nothing (the spectator's place for a seat's own secrets)."""
    if part is None:
        return
    if isinstance(part, dict):
        assert isinstance(whole, dict), path
        for key, value in part.items():
            assert key in whole, f"{path}/{key} is not in a seat's view"
            contained(value, whole[key], f"{path}/{key}")
    elif isinstance(part, list):
        assert isinstance(whole, list) and len(part) == len(whole), path
        for index, (a, b) in enumerate(zip(part, whole, strict=True)):
            contained(a, b, f"{path}/{index}")
    else:
        assert part == whole, f"{path}: the spectator sees {part!r}, a seat sees {whole!r}"


@pytest.fixture
def played(api, bad_bots, workers) -> list[dict]:
    """One match of every multi-seat variant, played by a worker."""
    bot = api.register_bot(bad_bots.url("/good"), name="good")
    matches = [api.create_match(name, [{"kind": "bot", "bot_id": bot}] * variant["num_players"],
                                seed=31, options=variant["options"])
               for name, variant in CONFIGS]
    assert workers.start(burst=True)[0].wait(timeout=60) == 0
    return matches


def test_the_spectator_sees_only_what_every_seat_sees(api, played):
    for match in played:
        record = api.get(f"/matches/{match['id']}/replay").get_json()
        assert record["result"] is not None
        last = len(record["steps"])
        for step in sorted({0, 1, 2, last // 2, last - 1, last}):
            url = f"/matches/{match['id']}/replay/{step}"
            spectator = api.get(url).get_json()["view"]
            assert not spectator.get("legal_actions") and spectator.get("seat") is None
            for seat in range(match["num_players"]):
                view = api.get(f"{url}?seat={seat}").get_json()["view"]
                contained(spectator["log"], view["log"], "/log")
