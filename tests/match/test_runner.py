"""run_match in-process (no Redis) against real HTTP bots on loopback."""

from __future__ import annotations

import pytest

import engines
from referee.match import replay
from referee.match.runner import (
    FailurePolicy,
    PushSeat,
    forfeit_result,
    run_match,
    substitute_action,
)
from referee.match.verify import verify
from tests.support.apitest import replay_states
from tests.support.botserver import FAULTS, HEALTHY_DEADLINE_MS, deadline_for, fault_url

VARIANTS = [(name, variant) for name in engines.names()
            for variant in engines.get(name).variants()]


def play(game: str, urls: list[str], policy: FailurePolicy, seed: int = 11,
         options: dict | None = None,
         deadlines_ms: list[int] | None = None) -> tuple[dict, list[dict]]:
    """One match in-process; each seat's deadline defaults to a generous 3 s."""
    deadlines_ms = deadlines_ms or [HEALTHY_DEADLINE_MS] * len(urls)
    seats = [PushSeat(url, deadline, bot_id=f"b{i}", name=f"bot {i}")
             for i, (url, deadline) in enumerate(zip(urls, deadlines_ms, strict=True))]
    seen: list[dict] = []
    record = run_match(game, seed, options or {}, seats, policy, "m-runner",
                       on_step=seen.append)
    return record, seen


@pytest.mark.parametrize("game, variant", VARIANTS,
                         ids=[f"{g}-{v['num_players']}p-{v['options']}" for g, v in VARIANTS])
def test_random_bots_play_every_variant_to_the_end(bot_server, game, variant):
    urls = [bot_server.url("/random")] * variant["num_players"]
    start = len(bot_server.received["/random"])
    record, seen = play(game, urls, FailurePolicy(), options=variant["options"])
    engine = engines.get(game)
    states = replay_states(record)
    assert engine.is_over(states[-1])
    assert record["result"] == engine.result(states[-1])
    assert record["forfeit"] is None and record["strikes"] == [0] * variant["num_players"]
    assert seen == record["steps"] and len(seen) > 0
    assert record["initial_state_hash"] == replay.state_hash(states[0])
    for index, step in enumerate(record["steps"]):
        assert step["step"] == index and step["fault"] is None
        assert step["seat"] == engine.current_seat(states[index])
        assert step["state_hash"] == replay.state_hash(states[index + 1])
    sent = bot_server.received["/random"][start:]
    assert [p["step"] for p in sent] == list(range(len(seen)))
    for payload, state in zip(sent, states, strict=False):
        assert payload["observation"] == engine.observation(state, payload["seat"])
        assert payload["legal_actions"] == engine.legal_actions(state)
    assert record["format"] == replay.FORMAT and record["game_version"] == engine.version
    report = verify(record)
    assert report.valid and report.chain == "valid" and report.signature == "missing"
    assert record["seats"][0] == {"seat": 0, "kind": "bot", "bot_id": "b0", "name": "bot 0",
                                  "deadline_ms": HEALTHY_DEADLINE_MS}


@pytest.mark.parametrize("path, code", FAULTS, ids=[p for p, _ in FAULTS])
def test_a_fault_under_forfeit_ends_the_match_with_the_seat_last(bot_server, refused_url,
                                                                   path, code):
    urls = [bot_server.url("/random"), fault_url(bot_server, refused_url, path)]
    record, _ = play("aladino", urls, FailurePolicy(),
                     deadlines_ms=[HEALTHY_DEADLINE_MS, deadline_for(path)])
    last = record["steps"][-1]
    assert last["seat"] == 1 and last["action"] is None
    assert last["fault"]["code"] == code and last["fault"]["policy"] == "forfeit"
    assert last["fault"]["detail"]
    assert [s["fault"] for s in record["steps"][:-1]] == [None] * (len(record["steps"]) - 1)
    assert record["forfeit"] == {"seat": 1, "step": last["step"], "fault": code}
    assert record["result"]["ranks"] == [1, 2] and record["result"]["scores"] == [1, 0]
    assert record["strikes"] == [0, 1]
    states = replay_states(record)
    assert last["state_hash"] == replay.state_hash(states[-1])


@pytest.mark.parametrize("path, code", FAULTS, ids=[p for p, _ in FAULTS])
def test_a_fault_under_random_substitutes_a_seeded_legal_move(bot_server, refused_url,
                                                              path, code):
    urls = [fault_url(bot_server, refused_url, path), bot_server.url("/random")]
    record, _ = play("aladino", urls, FailurePolicy.uniform("random", strike_limit=None),
                     deadlines_ms=[deadline_for(path), HEALTHY_DEADLINE_MS])
    engine = engines.get("aladino")
    states = replay_states(record)
    assert engine.is_over(states[-1]) and record["forfeit"] is None
    faulty = [s for s in record["steps"] if s["seat"] == 0]
    assert faulty and record["strikes"] == [len(faulty), 0]
    for step in faulty:
        assert step["fault"]["code"] == code and step["fault"]["policy"] == "random"
        legal = engine.legal_actions(states[step["step"]])
        assert step["action"] == substitute_action(record["seed"], step["step"], legal)
    if path in ("/error", "/garbage", "/illegal"):
        assert faulty[0]["fault"]["raw"]


def test_under_random_a_seat_forfeits_at_its_first_fault_past_the_strike_limit(bot_server):
    urls = [bot_server.url("/garbage"), bot_server.url("/random")]
    record, _ = play("aladino", urls, FailurePolicy.uniform("random", strike_limit=3))
    faults = [s["fault"]["policy"] for s in record["steps"] if s["fault"]]
    assert faults == ["random", "random", "random", "forfeit"]
    assert record["strikes"] == [4, 0] and record["forfeit"]["seat"] == 0
    assert record["result"]["ranks"] == [2, 1]
    assert record["policy"]["strike_limit"] == 3 and verify(record).valid


def test_the_policy_applies_per_fault_code(bot_server):
    policy = FailurePolicy(malformed="random")
    urls = [bot_server.url("/garbage"), bot_server.url("/error")]
    record, _ = play("aladino", urls, policy)
    codes = [(s["seat"], s["fault"]["code"], s["fault"]["policy"]) for s in record["steps"]]
    assert codes == [(0, "malformed", "random"), (1, "crash", "forfeit")]
    assert record["result"]["ranks"] == [1, 2]


def test_forfeit_ranks_the_forfeiter_last_and_the_others_first():
    result = forfeit_result(3, {"seat": 1, "step": 4, "fault": "timeout"})
    assert result["ranks"] == [1, 3, 1] and result["scores"] == [1, 0, 1]
    assert result["details"]["forfeit"] == {"seat": 1, "step": 4, "fault": "timeout"}


def test_a_policy_must_name_forfeit_or_random():
    with pytest.raises(ValueError, match="forfeit, random"):
        FailurePolicy(timeout="ignore")
