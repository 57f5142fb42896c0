"""Checking a bot before it plays (`referee check-bot`, a ladder's entry check): real
decisions from every phase of a game, drawn from seeded random playouts of every setup the
game supports (player counts and modes), put to the bot; the answers that are late,
malformed or illegal are its findings, classed as in a match (an action that fails the
game's action schema, the engine's InvalidAction, is `malformed`; one against the rules,
IllegalAction, `illegal`).

A decision's *phase* is the set of action types it offers; a few decisions of every phase
of every setup are sent, early, middle and late ones, so every action type the engine
lists is exercised.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass

import engines
from engines.base import Action, Game, State, Variant
from referee.match.botclient import BotClient, Fault
from referee.match.runner import state_payload

MAX_PLAYOUT_STEPS = 5000
EXTRA_PLAYOUTS = 20


@dataclass(frozen=True)
class Decision:
    """One decision to put to the bot: a state of a playout and its setup."""

    setup: str
    step: int
    state: State
    phase: tuple[str, ...]


@dataclass
class Finding:
    """A faulty answer: the fault code and the reason, for a bot author to read."""

    decision: Decision
    fault: str
    detail: str
    raw: str


def setups(game: Game) -> Iterator[tuple[str, Variant]]:
    """Every supported setup with a readable label, e.g. ("2p", {...}) or ("1p mode=solo", ...)."""
    for variant in game.variants():
        options = " ".join(f"{k}={v}" for k, v in sorted(variant["options"].items()))
        yield f"{variant['num_players']}p {options}".strip(), variant


def playout(game: Game, variant: Variant, seed: int
            ) -> Iterator[tuple[int, State, list[Action]]]:
    """(step, state, legal actions) for every decision of one random playout."""
    chooser = random.Random(seed)
    state = game.new_game(variant["num_players"], seed, variant["options"])
    for step in range(MAX_PLAYOUT_STEPS):
        if game.is_over(state):
            return
        legal = game.legal_actions(state)
        yield step, state, legal
        state = game.apply(state, chooser.choice(legal))


def sample_decisions(game: Game, first_seed: int, playouts: int, per_phase: int
                     ) -> list[Decision]:
    """Up to `per_phase` decisions of every phase of every setup, spread evenly over the
    phase's occurrences in the playouts. Past `playouts` seeds, more are played (up to
    EXTRA_PLAYOUTS) while an action type of describe() has not been offered yet."""
    wanted = set(game.describe().get("actions", {}))
    by_phase: dict[tuple[str, tuple[str, ...]], list[Decision]] = {}
    offered: set[str] = set()
    for seed in range(first_seed, first_seed + playouts + EXTRA_PLAYOUTS):
        if seed >= first_seed + playouts and wanted <= offered:
            break
        for label, variant in setups(game):
            for step, state, legal in playout(game, variant, seed):
                phase = tuple(sorted({a["type"] for a in legal}))
                offered.update(phase)
                by_phase.setdefault((label, phase), []).append(Decision(label, step, state, phase))
    return [pick for found in by_phase.values() for pick in spread(found, per_phase)]


def spread(items: list, count: int) -> list:
    """`count` items evenly spaced from first to last (all of them when there are fewer)."""
    if len(items) <= count:
        return list(items)
    if count == 1:
        return [items[0]]
    return [items[round(i * (len(items) - 1) / (count - 1))] for i in range(count)]


def payload(game: Game, decision: Decision, index: int, deadline_ms: int) -> dict:
    """What the referee POSTs for this decision (design.md section 4)."""
    seat = game.current_seat(decision.state)
    assert seat is not None  # every decision is drawn from a game in progress
    return state_payload(game, decision.state, f"check-bot-{index}", seat, decision.step,
                         deadline_ms)


async def check(game: Game, client: BotClient, decisions: list[Decision]
                ) -> tuple[list[Finding], list[float]]:
    """Ask the bot every decision (the client is closed at the end); the faulty answers and
    the time each answer took."""
    deadline_ms = client.deadline_ms
    findings, timings = [], []
    try:
        for index, decision in enumerate(decisions):
            reply = await client.decide(payload(game, decision, index, deadline_ms))
            timings.append(reply.elapsed_ms)
            if reply.fault:
                findings.append(Finding(decision, reply.fault, reply.detail, reply.raw))
                continue
            try:
                game.apply(decision.state, reply.action)
            except engines.InvalidAction as error:
                findings.append(Finding(decision, Fault.MALFORMED, error.reason, reply.raw))
            except engines.EngineError as error:
                findings.append(Finding(decision, Fault.ILLEGAL, error.reason, reply.raw))
    finally:
        await client.aclose()
    return findings, timings
