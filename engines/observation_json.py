"""Observations as JSON, written fast for the successive states of one match.

`ObservationWriter(game).write(state, seat)` gives exactly
`orjson.dumps(game.observation(state, seat))`, with the legal actions, without writing again
what the seat's previous observation already wrote:
- the log: each entry is written once per seat and added to that seat's log JSON. A state's
  log extends the one written last when the last entry written is the very same object in
  it (logged entries are never changed, and each state shares them with the one before);
  any other log is written afresh. `write(state, seat, log_from=n)` gives the log's entries
  from the n-th on only (what a bot that keeps the log asks for: docs/bots.md, The log
  since your last decision).
- the game's view: a game's `Rules._view_parts` keeps its costly parts' JSON with the part
  of the state each is made from (engines.view_memo), written again only when that is
  another object.

The referee sends and exports observations at every decision (the worker's request to a
bot, `referee export`'s records): there the log, which grows all match long, was most of
the cost.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

import orjson

from .base import Game, Rules, visible_entry
from .types import Action, State
from .view_memo import Memo


class Written(NamedTuple):
    """An observation's JSON, and its legal actions as a list and as JSON."""

    observation: bytes
    legal_actions: list[Action]
    legal_actions_json: bytes


@dataclass
class _SeatLog:
    """What was written of a seat's log: how many entries, the last of them, their JSON, and
    where each entry starts in it."""

    count: int = 0
    last: Any = None
    json: bytes = b"[]"
    starts: list[int] = field(default_factory=list)

    def since(self, first: int) -> bytes:
        """The JSON of the entries from the `first`-th on."""
        if first <= 0:
            return self.json
        if first >= self.count:
            return b"[]"
        return b"[" + self.json[self.starts[first]:]


class ObservationWriter:
    """`orjson.dumps(game.observation(state, seat))` for the states of one match, in any
    order (each seat's log is written once as long as the states follow each other)."""

    def __init__(self, game: Game):
        self.game = game
        self.memo = Memo()
        self.logs: dict[int | None, _SeatLog] = {}

    def write(self, state: State, seat: int | None, log_from: int = 0) -> Written:
        """The observation's JSON, its log from its `log_from`-th entry on."""
        game = self.game
        if not isinstance(game, Rules):  # an earlier version, translated (engines.legacy)
            observation = game.observation(state, seat)
            legal = observation["legal_actions"]
            if log_from > 0:
                observation = {**observation, "log": observation["log"][log_from:]}
            return Written(orjson.dumps(observation), legal, orjson.dumps(legal))
        if seat is not None:
            game.check_seat(state, seat)
        legal = game.shown_legal_actions(state, seat)
        legal_json = orjson.dumps(legal)
        observed = game.observed(state, seat, game._view_parts(state, seat, self.memo),
                                 orjson.Fragment(legal_json),
                                 orjson.Fragment(self._log(state["log"], seat).since(log_from)))
        return Written(orjson.dumps(observed), legal, legal_json)

    def _log(self, log: list[Any], seat: int | None) -> _SeatLog:
        """`visible_log(state, seat)` written, the entries written before reused."""
        known = self.logs.get(seat)
        if known is None or known.count > len(log) or (
                known.count and log[known.count - 1] is not known.last):
            known = self.logs[seat] = _SeatLog()
        if known.count < len(log):
            key = None if seat is None else str(seat)
            entries = [orjson.dumps(visible_entry(entry, key)) for entry in log[known.count:]]
            start = len(known.json) - (1 if not known.count else 0)  # after "[" or the ","
            for entry in entries:
                known.starts.append(start)
                start += len(entry) + 1
            before = memoryview(known.json)[:-1]  # without its "]"
            known.json = b"".join((before, b"," if known.count else b"", b",".join(entries),
                                   b"]"))
            known.count, known.last = len(log), log[-1]
        return known
